import * as v from 'valibot';

/** A whole number of bytes, at least `min`. */
const Bytes = (def: number, min: number) =>
  v.optional(
    v.pipe(
      v.number('expected a whole number of bytes'),
      v.integer('expected a whole number of bytes'),
      v.minValue(min, `expected at least ${min} bytes`),
    ),
    def,
  );
/** How many files a rotated log keeps, the current one included. */
const Files = (def: number) =>
  v.optional(
    v.pipe(
      v.number('expected a whole number of files'),
      v.integer('expected a whole number of files'),
      v.minValue(1, 'expected at least 1 file'),
      v.maxValue(100, 'expected at most 100 files'),
    ),
    def,
  );

const MiB = 1024 * 1024;

/**
 * `Logs`: how big the files the daemon writes may grow. A server's log (`<instance>/logs/server.log`) and the audit
 * log (`logs/audit.log`) each rotate at `…MaxBytes` and keep `…Files` files, the current one included, so each
 * takes at most MaxBytes × Files of disk whatever a server prints or a stranger sends.
 */
export const LogsSchema = v.strictObject(
  {
    ServerLogMaxBytes: Bytes(10 * MiB, 1024),
    ServerLogFiles: Files(5),
    AuditLogMaxBytes: Bytes(10 * MiB, 1024),
    AuditLogFiles: Files(5),
  },
  'expected a map of log settings',
);

export type LogsSettings = v.InferOutput<typeof LogsSchema>;
