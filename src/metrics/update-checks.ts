import { Counter, Gauge, type Registry } from 'prom-client';

/** Update checks by result, and when one last worked: a failing check is an alert rule away. */
export function createUpdateCheckFamilies(registry: Registry) {
  const registers = [registry];
  // biome-ignore format: one metric a line
  return {
    checks: new Counter({ name: 'watchdog_update_checks_total', help: 'Update checks that ended, by result: available (an update was found), none, failed.', labelNames: ['instance', 'result'] as const, registers }),
    lastSuccess: new Gauge({ name: 'watchdog_update_check_last_success_timestamp_seconds', help: 'When an update check of the instance last worked (Unix time); absent until one has.', labelNames: ['instance'] as const, registers }),
  };
}
export type UpdateCheckFamilies = ReturnType<typeof createUpdateCheckFamilies>;
