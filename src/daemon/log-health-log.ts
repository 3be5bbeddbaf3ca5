import { subscribe, type Bus } from '../bus.ts';
import type { Logger } from '../log.ts';

/**
 * Says in the daemon's log, once each, when a server's log starts dropping lines and when it is written again (with
 * the count), from the bus facts `src/supervisor/log-health.ts` reports. Returns the function that stops it.
 */
export function logServerLogHealth(bus: Bus, log: Logger, retryMs: () => number): () => void {
  return subscribe(bus, {
    'log:failing': (e) =>
      log
        .child(e.key)
        .error(
          `cannot write ${e.file} (${e.code}): dropping its lines and counting them, trying again every ${retryMs() / 1000} s; ` +
            'free space on that file system or fix the folder and it resumes by itself',
          { error: e.message },
        ),
    'log:resumed': (e) =>
      log
        .child(e.key)
        .info(`writing ${e.file} again; ${e.dropped} line(s) were dropped meanwhile`, { dropped: e.dropped }),
  });
}
