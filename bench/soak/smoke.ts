import type { SoakContext } from './context.ts';
import { control } from './faults-control.ts';
import { serverFault } from './faults-server.ts';
import type { Setup } from './setup.ts';
import type { FaultKind, Invariant } from './state.ts';
import { settled } from './watch-procs.ts';
import { daemonKill } from './world.ts';

/**
 * The smoke (`npm run soak -- --smoke`, run by `npm test` in test/soak/soak.test.ts): the soak's daemon, checks
 * and injectors on five servers, with a script instead of a seeded plan, so it fits in about 15 s on a busy
 * two-core machine. Each step waits for the fact the next one needs (the daemon settled, the kill timed), with the
 * run's deadline; the longer soaks (`npm run soak`) keep every fault kind and every invariant.
 */

/** What the script injects: a crash, a hang left to the daemon, a daemon SIGKILL and restart. */
export const SMOKE_FAULTS = [
  'sigstop-hang',
  'sigkill-server',
  'daemon-kill-no-persist',
] as const satisfies readonly FaultKind[];

/**
 * The invariants the script gives a chance to be checked, each at least once. Left out: those of faults it does not
 * inject (updates, control traffic, reloads, forks, the environment faults), rss-stable (runs of 2 minutes or more)
 * and loop-lag-p99 (a second /metrics scrape of one daemon, 5 s apart, in a window the machine did not starve).
 */
export const SMOKE_INVARIANTS = [
  'one-server-per-instance',
  'one-holder-per-port',
  'no-orphan',
  'relaunch-within-bound',
  'hang-killed-within-bound',
  'data-json-parses',
  'chat-bounded',
  'nothing-left-after-sigterm',
  'daemon-alive',
  'daemon-health',
  'logs-bounded',
  'no-escaped-error',
] as const satisfies readonly Invariant[];

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `ok` every 100 ms until it holds (true) or `deadline` passes (false, said in the log). */
async function until(ctx: SoakContext, what: string, ok: () => boolean, deadline: number): Promise<boolean> {
  while (!ok()) {
    if (Date.now() > deadline) {
      ctx.s.log(`smoke: gave up waiting for ${what}`);
      return false;
    }
    await sleep(100);
  }
  return true;
}

/**
 * 1. The first daemon settles (its servers run, each the one it names). 2. One server is frozen (SIGSTOP, left to
 * the daemon) and another SIGKILLed. 3. The frozen one's kill and a relaunch are timed against their bounds.
 * 4. The daemon is SIGKILLed with its servers running; the next runs without PersistServers, so it shuts them down
 * and launches its own. 5. That daemon settles. The run then ends with its SIGTERM (nothing may be left).
 */
export async function smokeScript(ctx: SoakContext, setup: Setup, deadline: number): Promise<void> {
  const { s } = ctx;
  const checked = (inv: Invariant) => (s.checks.get(inv) ?? 0) > 0;
  const restart = (key: string) => void control(s, key, 'restart');
  if (!(await until(ctx, 'the first daemon to settle', () => settled(s, Date.now()), deadline))) return;
  if (!(await until(ctx, 'a server to freeze', () => serverFault(ctx, 'sigstop-hang', restart), deadline))) return;
  if (!(await until(ctx, 'a server to kill', () => serverFault(ctx, 'sigkill-server', restart), deadline))) return;
  const timed = () => s.hangs.length === 0 && checked('hang-killed-within-bound') && checked('relaunch-within-bound');
  if (!(await until(ctx, "the frozen server's kill and a relaunch to be timed", timed, deadline))) return;
  // The first daemon runs without PersistServers: its kill counts as daemon-kill-no-persist.
  await daemonKill(ctx, setup.world, false, [200, 500]);
  await until(ctx, 'the restarted daemon to settle', () => settled(s, Date.now()), deadline);
}
