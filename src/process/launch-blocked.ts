import { LaunchBlockedError } from '../errors.ts';

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

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The LaunchBlockedError for `err` when it (or its cause) is one of the resource errors; null otherwise. One
 * already blocked is returned as it is.
 *
 * @example
 * try { await launch(); } catch (err) { throw resourceBlock(err) ?? err; }
 */
export function resourceBlock(err: unknown): LaunchBlockedError | null {
  if (err instanceof LaunchBlockedError) return err;
  const code = codeOf(err) ?? codeOf((err as { cause?: unknown } | null)?.cause);
  const reason = code === undefined ? undefined : RESOURCE_REASONS[code];
  return reason === undefined ? null : new LaunchBlockedError('resources', reason, { cause: err });
}
