import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { signal } from '../lib/proc.ts';
import { sleep } from '../lib/wait.ts';
import { FAULT_MESSAGES } from './bounds.ts';
import {
  DISK_FULL_MS,
  ENDLESS_STATUS_MS,
  ESCAPED_HELPER_LIFETIME_MS,
  FIFO_LOG_MS,
  LOGS_REMOVED_CHATTY_MS,
} from './config.ts';
import { type OneShotMode, pickRunning, type SoakContext, setMode } from './context.ts';
import { isLive, scanOurs } from './procscan.ts';
import { watchRecovery } from './recovery.ts';
import type { SmallFs } from './smallfs.ts';
import { countFault, type FaultKind, type Track } from './state.ts';

/**
 * Faults in the daemon's environment on the instance side: the instance file system full, an instance's
 * logs/ removed under a chatty server, its server.log made a named pipe, a server answering an endless /status,
 * and a server whose helper escapes its session holding the game port.
 */

const MiB = 1024 * 1024;

/** Configured instances with a live server, not busy with another fault: those a daemon-wide fault strikes. */
export function runningNow(ctx: SoakContext): Track[] {
  return [...ctx.s.tracks.values()].filter(
    (t) => t.configured && !ctx.busy.has(t.key) && t.status?.state === 'server.running' && t.status.pid !== null,
  );
}

/** Each instance struck by a daemon-wide fault may tell what it brings (bounds.ts), without counting as touched. */
export function allow(kind: FaultKind, keys: readonly Track[]): void {
  for (const t of keys) t.chatAllowance += FAULT_MESSAGES[kind];
}

/** Sets a one-shot mode (the server sets it back at launch) and kills the server, so its relaunch takes it. */
function relaunchAs(ctx: SoakContext, t: Track, pid: number, mode: OneShotMode): void {
  setMode(ctx.s, t.key, mode);
  signal(pid, 'SIGKILL');
}

/**
 * Fills the instance root's tmpfs (a chatty server printing meanwhile), holds it full for a while, frees it. Null
 * when no server was free to make chatty (nothing injected); else the hold, which ends with the space freed.
 */
export function diskFull(ctx: SoakContext, fs: SmallFs): Promise<void> | null {
  const { s, rng } = ctx;
  const chatty = pickRunning(ctx);
  const pid = chatty?.status?.pid ?? null;
  if (!chatty || pid === null || !isLive(pid)) return null;
  countFault(s, 'disk-full', chatty.key);
  ctx.busy.add(chatty.key);
  relaunchAs(ctx, chatty, pid, 'chatty');
  const struck = runningNow(ctx);
  allow('disk-full', struck);
  fs.fill();
  const holdMs = rng.between(...DISK_FULL_MS);
  s.log(
    `fault disk-full: ${fs.path} filled (${Math.round(fs.free() / 1024)} KiB free) for ${Math.round(holdMs)} ms, ${chatty.key} chatty, ${struck.length} servers running`,
  );
  watchRecovery(ctx, 'disk-full', [chatty.key, ...struck.map((t) => t.key)], Date.now() + holdMs);
  return sleep(holdMs).then(() => {
    fs.release();
    s.log(`fault disk-full ended: ${Math.round(fs.free() / MiB)} MiB free again`);
    ctx.busy.delete(chatty.key);
  });
}

/** A configured server that runs now (its pid live), not busy with another fault; null when there is none. */
export function pickLive(ctx: SoakContext): { t: Track; pid: number } | null {
  const t = pickRunning(ctx);
  const pid = t?.status?.pid ?? null;
  return t && pid !== null && isLive(pid) ? { t, pid } : null;
}

/**
 * Counts `kind` on `t` and keeps other faults off it for `ms`; then `end` runs and the end is logged (`ended` says
 * what it means). The instance must run again after it (recovery.ts).
 */
function holdFault(ctx: SoakContext, kind: FaultKind, t: Track, ms: number, ended: string, end?: () => void): void {
  countFault(ctx.s, kind, t.key);
  ctx.busy.add(t.key);
  const endsAt = Date.now() + ms;
  ctx.later(ms, () => {
    end?.();
    ctx.busy.delete(t.key);
    ctx.s.log(`fault ${kind} ended on ${t.key}: ${ended}`);
  });
  watchRecovery(ctx, kind, [t.key], endsAt);
}

/** Relaunches a server chatty, and removes its instances/<key>/logs/ while it prints (past a rotation's worth). */
export function logsRemoved(ctx: SoakContext): boolean {
  const { s } = ctx;
  const live = pickLive(ctx);
  if (!live) return false;
  const { t, pid } = live;
  holdFault(ctx, 'logs-removed', t, 1500 + LOGS_REMOVED_CHATTY_MS, 'the chatty server is quiet');
  relaunchAs(ctx, t, pid, 'chatty');
  const logs = join(s.dir, 'instances', t.key, 'logs');
  s.log(`fault logs-removed on ${t.key}: relaunched chatty (was pid ${pid}); ${logs} goes in 1.5 s`);
  ctx.later(1500, () => {
    rmSync(logs, { recursive: true, force: true });
    s.log(`fault logs-removed: removed ${logs}`);
  });
  return true;
}

/**
 * Relaunches a server that hands its game port to a helper in a session of its own (ignoring SIGTERM) and then
 * crashes; the helper lives ESCAPED_HELPER_LIFETIME_MS at most, and the instance must run again after that.
 */
export function escapingHelper(ctx: SoakContext): boolean {
  const { s } = ctx;
  const live = pickLive(ctx);
  if (!live) return false;
  const { t, pid } = live;
  holdFault(ctx, 'escaping-helper', t, ESCAPED_HELPER_LIFETIME_MS + 2000, "the helper's lifetime is over");
  relaunchAs(ctx, t, pid, 'escaping-helper');
  s.log(`fault escaping-helper on ${t.key} (was pid ${pid}): its relaunch hands port ${t.port} to a helper`);
  // Reported, so the run shows the helper really escaped (bounded: one look, 4 s on).
  ctx.later(4000, () => {
    const helpers = scanOurs(s.run).filter((p) => p.kind === 'child' && p.key === t.key);
    s.log(`fault escaping-helper on ${t.key}: helpers alive 4 s on: ${helpers.map((p) => p.pid).join(' ') || 'none'}`);
  });
  return true;
}

/**
 * Replaces a running server's server.log with a named pipe (as a server writing its own folder could), and removes
 * the pipe a few seconds later: the daemon must keep answering and supervising meanwhile, and write the log again
 * after. False when no server was free or mkfifo is missing.
 */
export function fifoLog(ctx: SoakContext): boolean {
  const { s, rng } = ctx;
  const live = pickLive(ctx);
  if (!live) return false;
  const { t } = live;
  const log = join(s.dir, 'instances', t.key, 'logs', 'server.log');
  rmSync(log, { force: true });
  if (spawnSync('mkfifo', [log]).status !== 0) return false;
  const holdMs = rng.between(...FIFO_LOG_MS);
  holdFault(ctx, 'fifo-log', t, holdMs, 'the pipe is gone', () => rmSync(log, { force: true }));
  s.log(`fault fifo-log on ${t.key}: ${log} is a named pipe for ${Math.round(holdMs)} ms`);
  return true;
}

/**
 * Relaunches a server whose GET /status never ends, and leaves it to the daemon's sampler for a while: the daemon
 * must read each answer only up to its cap and go on answering and supervising.
 */
export function endlessStatus(ctx: SoakContext): boolean {
  const live = pickLive(ctx);
  if (!live) return false;
  const { t, pid } = live;
  holdFault(ctx, 'endless-status', t, ENDLESS_STATUS_MS, 'the sampler met it');
  relaunchAs(ctx, t, pid, 'endless-status');
  ctx.s.log(`fault endless-status on ${t.key} (was pid ${pid}): its relaunch answers /status without end`);
  return true;
}
