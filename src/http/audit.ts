import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Bus, BusEvents } from '../bus.ts';
import { createLogger, type Logger } from '../log.ts';

export interface AuditLog {
  /** Stops listening and flushes what was written. */
  close(): Promise<void>;
}

/**
 * Appends every `control` event (accepted or refused) to `file` as one JSON line, with an ISO `time` next to the
 * epoch-ms `at`; an unknown user or remote address is `null`. Creates the folder. A write failure is logged,
 * never thrown into the emitter (bus handlers must not throw).
 */
export function createAuditLog(opts: { file: string; bus: Bus; log?: Logger }): AuditLog {
  const log = opts.log ?? createLogger('audit');
  mkdirSync(dirname(opts.file), { recursive: true });
  const out = createWriteStream(opts.file, { flags: 'a' });
  let failed = false;
  out.on('error', (err) => {
    if (!failed) log.error(`cannot write the audit log ${opts.file}: ${err.message}`, { file: opts.file });
    failed = true;
  });

  const onControl = (e: BusEvents['control']) => {
    if (failed) return;
    // null rather than an absent field, so every line has the same keys.
    const line = {
      time: new Date(e.at).toISOString(),
      ...e,
      user: e.user ?? null,
      remote: e.remote ?? null,
      reason: e.reason ?? null,
    };
    out.write(JSON.stringify(line) + '\n');
  };
  opts.bus.on('control', onControl);

  let closing: Promise<void> | null = null;
  return {
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        opts.bus.off('control', onControl);
        if (out.destroyed) return resolve();
        out.end(() => resolve());
        out.once('error', () => resolve());
      })),
  };
}
