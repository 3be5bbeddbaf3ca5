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
    return cause === '' || err.message.includes(cause) ? err.message : `${err.message}: ${cause}`;
  }
  return String(err);
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
