import { type Bus, subscribe } from '../bus.ts';
import type { Logger } from '../log.ts';

/** What a person can do about a write error, by its code; it resumes by itself once that is done. */
function remedy(code: string): string {
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'free space on that file system';
  if (code === 'EMFILE' || code === 'ENFILE') return 'the watchdog is out of file descriptors (see Connections.*)';
  if (code === 'EIO') return 'check the device: it reports I/O errors';
  return 'fix the folder (it must exist and be writable)';
}

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
            `${remedy(e.code)}, and it resumes by itself`,
          { error: e.message },
        ),
    'log:resumed': (e) =>
      log
        .child(e.key)
        .info(`writing ${e.file} again; ${e.dropped} line(s) were dropped meanwhile`, { dropped: e.dropped }),
  });
}
