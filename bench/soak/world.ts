import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DAEMON_SETTLE_MS } from './bounds.ts';
import { type SoakConfig, type SoakInstance, soakYaml } from './config.ts';
import type { SoakContext } from './context.ts';
import { killSoakDaemon, type SoakDaemon, startSoakDaemon, stopSoakDaemon } from './daemon.ts';
import { countFault, kick, newTrack } from './state.ts';

/** The daemon and its configuration: start, SIGKILL-and-restart, reload (rewrite + SIGHUP), final stop. */
export interface World {
  config: SoakConfig;
  daemon: SoakDaemon | null;
  /** Instances that may be added by a reload (configured later, or removed earlier). */
  spares: SoakInstance[];
  /** Daemons started so far (the first included). */
  starts: number;
}

function writeConfig(w: World): void {
  writeFileSync(join(w.config.dir, 'appsettings.yml'), soakYaml(w.config));
}

export async function startDaemon(ctx: SoakContext, w: World): Promise<void> {
  writeConfig(w);
  const d = await startSoakDaemon(w.config.dir, w.config.daemonPort);
  w.daemon = d;
  w.starts++;
  ctx.s.daemonPid = d.pid;
  ctx.s.daemonUrl = d.url;
  ctx.s.daemonReadyAt = Date.now();
  ctx.s.daemonPersists = w.config.persist;
  // Until it settles an instance may show stopped.idle while a leftover server is shut down before its launch.
  kick(ctx.s, ctx.s.daemonReadyAt + DAEMON_SETTLE_MS);
  ctx.s.log(`daemon ${d.pid} up (PersistServers: ${w.config.persist})`);
}

/**
 * SIGKILL the daemon while its servers run, then start the next one with `persist` (adopt, or shut leftovers down)
 * after a pause drawn from `downMs` (how long no daemon runs: part of the fault, not a wait for anything).
 */
export async function daemonKill(
  ctx: SoakContext,
  w: World,
  persist: boolean,
  downMs: [number, number] = [200, 2000],
): Promise<void> {
  if (!w.daemon) return;
  countFault(ctx.s, w.config.persist ? 'daemon-kill-persist' : 'daemon-kill-no-persist');
  ctx.s.log(`fault daemon SIGKILL (was PersistServers: ${w.config.persist}, next: ${persist})`);
  ctx.s.daemonReadyAt = null;
  await killSoakDaemon(w.daemon);
  w.daemon = null;
  ctx.s.daemonPid = null;
  await new Promise((r) => setTimeout(r, ctx.rng.between(...downMs)));
  w.config.persist = persist;
  await startDaemon(ctx, w);
}

/** Rewrites appsettings.yml and sends SIGHUP: one instance removed, one added, one timeout changed. */
export function reload(ctx: SoakContext, w: World): void {
  if (!w.daemon) return;
  const { rng, s } = ctx;
  const removable = w.config.instances.filter((i) => !i.manifest && !ctx.busy.has(i.key));
  const removed = rng.chance(0.7) && removable.length > 0 ? rng.pick(removable) : null;
  const added =
    w.spares.length > 0 && rng.chance(0.7) ? w.spares.splice(rng.int(0, w.spares.length - 1), 1)[0] : undefined;
  const changed = rng.pick(w.config.instances.filter((i) => i !== removed));
  changed.timeoutSeconds = changed.timeoutSeconds === 8 ? 10 : 8;
  if (removed) {
    w.config.instances = w.config.instances.filter((i) => i !== removed);
    w.spares.push(removed);
  }
  if (added) w.config.instances.push(added);
  countFault(s, 'config-reload');
  s.log(
    `fault config-reload: -${removed?.key ?? 'none'} +${added?.key ?? 'none'} ${changed.key} TimeoutSeconds ${changed.timeoutSeconds}`,
  );
  writeConfig(w);
  const now = Date.now();
  if (removed) {
    const t = s.tracks.get(removed.key);
    if (t) t.configured = false;
  }
  if (added) {
    // The webhook counts by key over the whole run: an instance added back keeps what its first life allowed.
    const before = s.tracks.get(added.key)?.chatAllowance ?? 0;
    s.tracks.set(added.key, { ...newTrack(added, now), chatAllowance: before });
  }
  const t = s.tracks.get(changed.key);
  if (t) t.timeoutSeconds = changed.timeoutSeconds;
  process.kill(w.daemon.pid, 'SIGHUP');
  kick(s, now);
}

/** The final SIGTERM: every server shut down (PersistServers false in the last phase), the daemon gone. */
export async function stopDaemon(ctx: SoakContext, w: World): Promise<number | null> {
  if (!w.daemon) return null;
  if (w.config.persist) {
    // The plan ends with PersistServers false, but a daemon revived after a crash keeps the phase it died in, and a
    // reload cannot turn it off (Process is restart-only: src/daemon/reload.ts, RESTART_ONLY): that daemon would
    // rightly leave every server running at SIGTERM. It is SIGKILLed and the next one, without PersistServers, shuts
    // its servers down at start and takes the SIGTERM.
    ctx.s.daemonReadyAt = null;
    await killSoakDaemon(w.daemon);
    w.daemon = null;
    w.config.persist = false;
    await startDaemon(ctx, w);
    if (!w.daemon) return null;
  }
  ctx.s.daemonReadyAt = null;
  const code = await stopSoakDaemon(w.daemon, 30_000);
  w.daemon = null;
  ctx.s.daemonPid = null;
  return code;
}
