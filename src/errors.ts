/** Errors a person reads: each says what failed, where, and carries the underlying `cause`. */

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    readonly problems: string[],
    options?: ErrorOptions,
  ) {
    super(problems.join('\n'), options);
  }
}

export class UpdateError extends Error {
  override name = 'UpdateError';
}

export class ProcessError extends Error {
  override name = 'ProcessError';
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * The message of any thrown value, for log lines, with its cause's message when that adds something: a wrapper
 * that already quotes its cause (`cannot listen on …: listen EADDRINUSE …`) does not get it twice.
 */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? err.cause.message : '';
    const root = rootCause(err);
    if (cause === '' || err.message.includes(cause) || (root !== '' && err.message.includes(root))) return err.message;
    return `${err.message}: ${cause}`;
  }
  return String(err);
}

/**
 * The innermost cause's message, or '' when `err` has no cause. Node's fetch fails with a bare "fetch failed" whose
 * cause (or its cause) says what went wrong: `getaddrinfo ENOTFOUND cdn.example.org`, `connect ECONNREFUSED …`.
 */
export function rootCause(err: unknown): string {
  let cur: unknown = err instanceof Error ? err.cause : undefined;
  let found = '';
  for (let depth = 0; cur instanceof Error && depth < 8; depth += 1) {
    found = cur.message;
    cur = cur.cause;
  }
  return found;
}

/**
 * A launch that could not happen for a reason that is not the server's fault: the daemon is out of descriptors or
 * memory (`resources`), or the game port is still held (`port`). Such a launch is retried with back-off and never
 * counts as a startup failure.
 */
export class LaunchBlockedError extends ProcessError {
  override name = 'LaunchBlockedError';
  constructor(
    readonly kind: 'resources' | 'port',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
