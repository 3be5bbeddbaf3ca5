/**
 * How the instance statechart counts and tells a server's exit (classifyExit), and the tests on exits and loops its
 * guards and actions use. Pure, like instance.context.ts.
 */

import { backoffMs, type InstanceContext, type InstanceMachineEvent } from './instance.context.ts';
import type { AlertKind, ExitInfo, ExitReason, InstanceEmitted, RestartReason } from './instance.types.ts';

/**
 * The alert as emitted: exit status (none for a hang: the kill was ours), the count that matters for its kind, the
 * back-off.
 */
export function alertOf(
  context: InstanceContext,
  kind: AlertKind,
  backoff: number | null = null,
): Extract<InstanceEmitted, { type: 'alert' }> {
  const last = context.lastExit;
  return {
    type: 'alert',
    kind,
    exit: kind === 'hang' || kind === 'hang-loop' || last === null ? null : { code: last.code, signal: last.signal },
    detail: kind === 'hang' || kind === 'hang-loop' ? null : (last?.detail ?? null),
    failures:
      kind === 'crash' || kind === 'crash-loop' || kind === 'hang-loop' ? context.crashStreak : context.startupFailures,
    backoffMs: backoff,
  };
}

export const unclean = (exit: ExitInfo | null): boolean => exit !== null && (exit.code !== 0 || exit.signal !== null);

/**
 * A hang is the first of its loop (it is told, and dumped): no hang since the last stable run and, before a
 * check-in, no startup failure yet. Later hangs of the loop are killed without either, a relaunch that hangs
 * before it checks in too (on a starved machine the loop's relaunches can: that is still the same loop).
 */
export const firstHang = (c: InstanceContext): boolean => c.loopHangs === 0 && (c.checkedIn || c.startupFailures === 0);

/** An exit nobody asked for, before a first check-in, that reaches the limit while no new build could help. */
export const givesUp = (c: InstanceContext): boolean =>
  !c.checkedIn && !c.updatePending && c.startupFailures >= c.timing.startupFailureLimit;

/**
 * `decide` was entered for a relaunch nobody asked for: after a crash or hang kill (intent `crash`), at the end of
 * a crash loop's back-off, or to retry a blocked launch. A server at its startup-failure limit is not one: a new
 * build may be what it needs.
 */
export const unaskedRelaunch = (c: InstanceContext): boolean =>
  (c.exitIntent === 'crash' || c.retrying) && c.startupFailures < c.timing.startupFailureLimit;

/** Why the process that just exited ended, from the intent it was going with. */
function exitReason(c: InstanceContext, exit: ExitInfo): ExitReason {
  if (exit.failure !== undefined) return 'launch-failed';
  switch (c.exitIntent) {
    case 'shutdown':
    case 'stop':
    case 'restart':
    case 'hang':
      return c.exitIntent;
    case 'rollback':
    case 'restore':
      return 'restart';
    default:
      return c.updatePending && !unclean(exit) ? 'update' : 'crash';
  }
}

/**
 * The current process exited: how it counts and what is said about it, decided once, here. An exit nobody asked
 * for, and a hang kill, become intent `crash`, which `decide` reads to give up or back off: a hang counts like a
 * crash (a startup failure before the first check-in, a step of the loop after it). The first hang's alert was
 * sent when it was killed (`killHung`); the exit adds the loop's. `leftForRestart`: the server was asked to leave at its
 * round end for a restart, so a clean exit without another intent counts as that restart.
 */
export function classifyExit(
  context: InstanceContext,
  exit: ExitInfo,
  leftForRestart = false,
): { context: InstanceContext; emitted: InstanceEmitted[] } {
  // A clean exit of a server asked to leave for a restart is that restart.
  const asked = leftForRestart && context.exitIntent === null && !unclean(exit);
  const before: InstanceContext = asked ? { ...context, exitIntent: 'restart' } : context;
  const reason = exitReason(before, exit);
  // The server's last words explain an exit nobody asked for; after a requested one they are its goodbye.
  const detail = exit.failure ?? (reason === 'crash' && unclean(exit) ? (exit.lastLine ?? null) : null);
  const c: InstanceContext = {
    ...before,
    lastExit: { code: exit.code, signal: exit.signal, reason, detail },
  };
  const emitted: InstanceEmitted[] = [];
  const restart = (reason: RestartReason) => {
    c.restarts += 1;
    emitted.push({ type: 'restart', reason });
  };
  const hang = c.exitIntent === 'hang';
  switch (c.exitIntent) {
    case 'shutdown':
      break;
    case 'stop':
      emitted.push({ ...alertOf(c, 'stopped'), by: c.stopBy });
      break;
    case 'restart':
    case 'rollback':
    case 'restore':
      restart('request');
      break;
    default:
      c.exitIntent = 'crash';
      if (!c.checkedIn) {
        c.startupFailures += 1;
        if (givesUp(c)) emitted.push(alertOf(c, 'failing'));
        // A launch that failed is tried again, but no server ran: not a restart (the counter counts runs).
        else if (reason !== 'launch-failed') restart(hang ? 'hang' : 'startup-failure');
      } else if (hang || unclean(exit)) {
        c.crashStreak += 1;
        if (hang) c.loopHangs += 1;
        restart(hang ? 'hang' : 'crash');
        if (c.crashStreak === 1 && !hang) emitted.push(alertOf(c, 'crash'));
        // One alert when it becomes a loop (a hang loop when every failure in it was a hang); a stable run (STABLE)
        // resets the streak and so the loop.
        else if (c.crashStreak === 2) {
          emitted.push(
            alertOf(c, c.loopHangs === c.crashStreak ? 'hang-loop' : 'crash-loop', backoffMs(c.timing, c.crashStreak)),
          );
        }
      } else restart(c.updatePending ? 'update' : 'exit');
  }
  return { context: c, emitted };
}

/** The second unclean exit or hang kill after check-ins without a stable run between them, or a later one. */
export const inLoop = (c: InstanceContext): boolean =>
  c.exitIntent === 'crash' &&
  c.checkedIn &&
  c.crashStreak >= 2 &&
  (c.lastExit?.reason === 'hang' || unclean(c.lastExit));

export const exitOf = (event: InstanceMachineEvent): ExitInfo => {
  if (event.type !== 'PROCESS_EXITED') return { code: null, signal: null };
  const { code, signal, failure, lastLine } = event;
  return {
    code,
    signal,
    ...(failure === undefined ? {} : { failure }),
    ...(lastLine === undefined ? {} : { lastLine }),
  };
};
