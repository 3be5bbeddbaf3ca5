import type { Bus, BusEvents, UpdatePhase } from '../bus.ts';
import type { Logger } from '../log.ts';

/** How often a running download is logged; the bus gets progress every 250 ms, which would flood the log. */
export const UPDATE_PROGRESS_LOG_EVERY_MS = 5_000;

type UpdateEvent = BusEvents['instance:update'];

/** The phases a provider reports while it works; the update actor logs the outcome (done, failed) itself. */
const WORK_PHASES: Partial<Record<UpdatePhase, string>> = {
  download: 'downloading update',
  verify: 'update download complete',
  extract: 'extracting update',
  install: 'moving the new build into bin/',
};

interface Seen {
  phase: UpdatePhase;
  loggedAt: number;
  log: Logger;
}

/** Bytes, and total and percentage when the server sent a length; nothing before the first byte. */
function sizeFields(e: UpdateEvent): Record<string, number> {
  if (!e.bytes) return {};
  if (e.total === undefined || e.total === null) return { bytes: e.bytes };
  const percent = e.total === 0 ? 100 : Math.floor((e.bytes / e.total) * 1000) / 10;
  return { bytes: e.bytes, total: e.total, percent };
}

/**
 * Logs update progress from the bus into `log.child(<key>).child('update')`: a line when a provider's phase starts
 * or changes, and while downloading at most one line per `everyMs`, so a long download shows it is alive without
 * flooding the log. Times come from the events' `at`. Returns the unsubscribe function.
 */
export function logUpdateProgress(bus: Bus, log: Logger, everyMs = UPDATE_PROGRESS_LOG_EVERY_MS): () => void {
  const seen = new Map<string, Seen>();
  const handler = (e: UpdateEvent) => {
    const message = WORK_PHASES[e.phase];
    if (message === undefined) {
      // check / none / done / failed: the run begins or ends, so the next download is announced afresh.
      seen.delete(e.key);
      return;
    }
    const prev = seen.get(e.key);
    const ilog = prev?.log ?? log.child(e.key).child('update');
    // A download event with no bytes yet is a download starting (artifact.ts, git.ts), even right after another.
    const restarted = e.phase === 'download' && !e.bytes;
    if (prev && prev.phase === e.phase && !restarted) {
      if (e.phase !== 'download' || e.at - prev.loggedAt < everyMs) return;
      seen.set(e.key, { ...prev, loggedAt: e.at });
      ilog.info('update download progress', sizeFields(e));
      return;
    }
    seen.set(e.key, { phase: e.phase, loggedAt: e.at, log: ilog });
    ilog.info(message, sizeFields(e));
  };
  bus.on('instance:update', handler);
  return () => {
    bus.off('instance:update', handler);
    seen.clear();
  };
}
