import { Counter, type Registry } from 'prom-client';

/** The families of what the daemon's environment did to it: dropped log lines, refusals, escaped errors. */
export function createResilienceFamilies(registry: Registry) {
  const registers = [registry];
  // biome-ignore format: one metric a line
  return {
    logDropped: new Counter({ name: 'watchdog_log_lines_dropped_total', help: "Lines of a server's log that could not be written (full disk, removed folder, …) and were dropped.", labelNames: ['instance'] as const, registers }),
    refused: new Counter({ name: 'watchdog_refused_requests_total', help: 'Requests refused before their credentials were accepted, by route (control, status, logs, admin, cross-site) and status.', labelNames: ['route', 'status'] as const, registers }),
    faults: new Counter({ name: 'watchdog_uncaught_errors_total', help: 'Errors that escaped every handler; the daemon logged each with its stack and went on.', labelNames: ['kind'] as const, registers }),
  };
}
export type ResilienceFamilies = ReturnType<typeof createResilienceFamilies>;
