import { readFileSync, writeFileSync } from 'node:fs';
import { signal } from '../lib/proc.ts';
import { sleep } from '../lib/wait.ts';
import { CLOCK_STEP_MS } from './config.ts';
import type { SoakContext } from './context.ts';
import { clockStepFile } from './daemon.ts';
import { isLive } from './procscan.ts';
import { check, countFault, since } from './state.ts';
import { unharmedWhile } from './unharmed.ts';

/**
 * The wall clock steps an hour (an NTP step, a VM resume, `date -s`): the daemon's `Date` moves (a preload,
 * daemon.ts), its timers and monotonic clock go on. Measured on the wall clock, a check-in window after a step back
 * would hold every later check-in for the size of the step and the daemon would kill healthy servers as hung (issue
 * 40). The soak steps the clock (0 → ±1 h, or back to 0), freezes one running server, and watches a few others:
 * none of those may be killed within a TimeoutSeconds and more (no-false-hang), and the frozen one must be killed
 * within its bound (hang-killed-within-bound). A daemon started later takes the offset at once: another step.
 */

const WITNESSES = 6;
let offset = 0;

const taken = (ctx: SoakContext, pid: number, value: number) => {
  try {
    return readFileSync(`${clockStepFile(ctx.s.dir)}.${pid}`, 'utf8') === String(value);
  } catch {
    return false;
  }
};

/**
 * Steps the daemon's clock and watches what follows (the promise: until the watch ends); null when fewer than two
 * servers were free to take part.
 */
export function clockStep(ctx: SoakContext): Promise<void> | null {
  const { s, rng } = ctx;
  const pid = s.daemonPid;
  const ready = s.daemonReadyAt;
  const free = [...s.tracks.values()].filter(
    (t) => t.configured && !ctx.busy.has(t.key) && t.status?.state === 'server.running' && t.status.pid !== null,
  );
  const [frozen, ...witnesses] = rng.sample(free, Math.min(free.length, WITNESSES + 1));
  const frozenPid = frozen?.status?.pid ?? null;
  if (pid === null || ready === null || !frozen || frozenPid === null || witnesses.length === 0) return null;
  const next = offset === 0 ? (rng.chance(0.5) ? CLOCK_STEP_MS : -CLOCK_STEP_MS) : 0;
  const step = `${next > offset ? '+' : ''}${(next - offset) / 3_600_000} h`;
  writeFileSync(clockStepFile(s.dir), String(next));
  offset = next;
  countFault(s, 'clock-step', frozen.key);
  const pids = new Map(witnesses.map((t) => [t.key, t.status?.pid ?? null] as const));
  for (const t of [frozen, ...witnesses]) ctx.busy.add(t.key);
  const windowMs = Math.max(...witnesses.map((t) => t.timeoutSeconds), frozen.timeoutSeconds) * 1000 + 4000;
  return (async () => {
    // Bounded: the preload reads the file every 50 ms; 5 s is a starved machine's worth.
    for (let i = 0; i < 50 && !taken(ctx, pid, next) && s.daemonPid === pid; i++) await sleep(100);
    const at = Date.now();
    const seen = taken(ctx, pid, next);
    if (seen && isLive(frozenPid)) {
      signal(frozenPid, 'SIGSTOP');
      s.hangs.push({ key: frozen.key, pid: frozenPid, at, reported: false });
    }
    ctx.later(frozen.timeoutSeconds * 1000 + 4000, () => void ctx.busy.delete(frozen.key));
    s.log(
      `fault clock-step: the daemon's clock stepped ${step} (now ${next / 3_600_000} h off${seen ? '' : ', NOT seen taken'}); ${frozen.key} frozen (pid ${frozenPid}), watching ${witnesses.map((t) => t.key).join(' ')}`,
    );
    await unharmedWhile(ctx, 'clock-step', windowMs, { rss: false });
    for (const t of witnesses) {
      const was = pids.get(t.key) ?? null;
      ctx.busy.delete(t.key);
      // Excused: a daemon killed by the plan (its servers are replaced or adopted), a request or a reload on it, or
      // descriptor pressure (check-ins refused for want of descriptors are a hang the daemon rightly acts on).
      const excused =
        !seen ||
        s.daemonReadyAt !== ready ||
        !t.configured ||
        t.touchedAt > at ||
        t.stopRequestedAt > at ||
        s.starvedUntil > at;
      if (excused || was === null) continue;
      check(
        s,
        'no-false-hang',
        isLive(was) && (t.status?.pid ?? was) === was,
        () =>
          `${t.key}: server ${was} gone by ${since(s)}, within a TimeoutSeconds of the clock stepping ${step} at ${since(s, at)} (state ${t.status?.state})`,
      );
    }
    s.log(`fault clock-step ended: ${witnesses.length} servers watched for ${windowMs} ms after the step`);
  })();
}
