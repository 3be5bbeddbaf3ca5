import type { InstanceTiming } from '../../machines/instance.types.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';

const ms = (seconds: number) => Math.round(seconds * 1000);

/** The machine's timings for one instance, from its `TimeoutSeconds` and the daemon-wide `Timing` section. */
export function instanceTiming(config: ResolvedConfig, instance: ResolvedInstance): InstanceTiming {
  const t = config.timing;
  return {
    checkinTimeoutMs: ms(instance.settings.TimeoutSeconds),
    backoffInitialMs: ms(t.BackoffInitialSeconds),
    backoffMaxMs: ms(t.BackoffMaxSeconds),
    stableRunMs: ms(t.StableRunSeconds),
    startupFailureLimit: t.StartupFailureLimit,
  };
}
