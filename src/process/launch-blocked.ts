import { LaunchBlockedError } from '../errors.ts';
import { errorCode } from './write-outage.ts';

/**
 * Errors of a launch that are about the daemon's resources, not the server: each is retried, never counted as a
 * startup failure. Node reports EMFILE, ENFILE and EAGAIN from spawn() as an 'error' event; ENOMEM is thrown.
 */
const RESOURCE_REASONS: Record<string, string> = {
  EMFILE: 'the watchdog is out of file descriptors (EMFILE)',
  ENFILE: 'the system is out of file descriptors (ENFILE)',
  EAGAIN: 'the system refused a new process for now (EAGAIN: a process or memory limit)',
  ENOMEM: 'the watchdog is out of memory to start a process (ENOMEM)',
};

/** The LaunchBlockedError for `err` when it (or its cause) is one of the resource errors (or one already); else null. */

export function resourceBlock(err: unknown): LaunchBlockedError | null {
  if (err instanceof LaunchBlockedError) return err;
  const code = [err, (err as { cause?: unknown } | null)?.cause].map(errorCode).find((c) => c !== 'error');
  const reason = code === undefined ? undefined : RESOURCE_REASONS[code];
  return reason === undefined ? null : new LaunchBlockedError('resources', reason, { cause: err });
}
