import * as v from 'valibot';
import { amount } from '../numbers.ts';

/** A whole number of bytes, at least `min`. */
const Bytes = (def: number, min: number) =>
  v.optional(amount('bytes', { whole: true, min, max: Number.MAX_SAFE_INTEGER }), def);
/** How many files a rotated log keeps, the current one included. */
const Files = (def: number) => v.optional(amount('files', { whole: true, min: 1, max: 100 }), def);

const MB = 1_000_000;

/**
 * `Logs`: how big the files the daemon writes may grow. A server's log (`<instance>/logs/server.log`) and the audit
 * log (`logs/audit.log`) each rotate at `…MaxBytes` and keep `…Files` files, the current one included, so each
 * takes at most MaxBytes × Files of disk whatever a server prints or a stranger sends.
 */
export const LogsSchema = v.strictObject(
  {
    ServerLogMaxBytes: Bytes(10 * MB, 1024),
    ServerLogFiles: Files(5),
    AuditLogMaxBytes: Bytes(10 * MB, 1024),
    AuditLogFiles: Files(5),
  },
  'expected a map of log settings',
);
