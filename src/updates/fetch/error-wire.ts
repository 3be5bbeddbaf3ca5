import { UpdateError } from '../../errors.ts';
import { DiskSpaceError } from '../install/disk-guard.ts';

/**
 * An error crossing from the update worker: a structured clone keeps only a plain Error's message, but the class
 * (and DiskSpaceError's reason), `code` and causes decide how a failure is told.
 */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  reason?: DiskSpaceError['reason'];
  cause?: WireError;
}

/** Enough for any wrapper in the update path, and never endless. */
const MAX_DEPTH = 8;

export function toWire(err: unknown, depth = 0): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const wire: WireError = { name: err.name, message: err.message, stack: err.stack };
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code === 'string') wire.code = code;
  if (err instanceof DiskSpaceError) wire.reason = err.reason;
  if (err.cause !== undefined && depth < MAX_DEPTH) wire.cause = toWire(err.cause, depth + 1);
  return wire;
}

export function fromWire(wire: WireError): Error {
  const options = wire.cause ? { cause: fromWire(wire.cause) } : undefined;
  const err =
    wire.name === 'DiskSpaceError' && wire.reason
      ? new DiskSpaceError(wire.reason, wire.message, options)
      : wire.name === 'UpdateError'
        ? new UpdateError(wire.message, options)
        : Object.assign(new Error(wire.message, options), { name: wire.name });
  if (wire.code !== undefined) Object.assign(err, { code: wire.code });
  if (wire.stack !== undefined) err.stack = wire.stack;
  return err;
}
