import type { Bus } from '../bus.ts';
import { monotonicMs } from '../clock.ts';
import type { Logger } from '../log.ts';

/** At most this many faults are logged with their stack per minute; the rest are counted (metrics) only. */
const LOGGED_PER_MINUTE = 20;

/** Keeps the daemon supervising when an error escapes every handler (docs/architecture.md says why). */
export function guardProcess(bus: Bus, log: Logger): () => void {
  let windowStart = Number.NEGATIVE_INFINITY;
  let logged = 0;
  const report = (kind: 'uncaught-exception' | 'unhandled-rejection', err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    const now = monotonicMs();
    if (now - windowStart >= 60_000) {
      windowStart = now;
      logged = 0;
    }
    if (++logged <= LOGGED_PER_MINUTE) {
      const stack = err instanceof Error ? (err.stack ?? message) : message;
      log.error(`unexpected error (${kind}), the daemon goes on supervising; please report it: ${message}`, { stack });
    }
    try {
      bus.emit('daemon:fault', { kind, message, at: Date.now() });
    } catch {
      // A subscriber failing here would only recurse.
    }
  };
  const onException = (err: Error) => report('uncaught-exception', err);
  const onRejection = (reason: unknown) => report('unhandled-rejection', reason);
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
