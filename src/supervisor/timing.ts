import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import type { InstanceTiming } from '../../machines/instance.types.ts';

const ms = (seconds: number) => Math.round(seconds * 1000);
/** setTimeout's longest delay: each setting is at most that (config MAX_SECONDS), but a sum of two may not be. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The machine's timings for one instance, from its `TimeoutSeconds` and the daemon-wide `Timing` section. */
export function instanceTiming(config: ResolvedConfig, instance: ResolvedInstance): InstanceTiming {
  const t = config.timing;
  return {
    checkinTimeoutMs: ms(instance.settings.TimeoutSeconds),
    // The process layer itself escalates to a kill after request + exit windows; this is the net under it.
    stopTimeoutMs: Math.min(ms(t.ShutdownRequestSeconds + t.ShutdownExitSeconds) + 2000, MAX_TIMER_MS),
    backoffInitialMs: ms(t.BackoffInitialSeconds),
    backoffMaxMs: ms(t.BackoffMaxSeconds),
    stableRunMs: ms(t.StableRunSeconds),
    startupFailureLimit: t.StartupFailureLimit,
  };
}
