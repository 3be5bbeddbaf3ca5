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

/** For log lines: with its cause's message unless the wrapper already quotes it (or its root cause). */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? err.cause.message : '';
    const root = rootCause(err);
    if (cause === '' || err.message.includes(cause) || (root !== '' && err.message.includes(root))) return err.message;
    return `${err.message}: ${cause}`;
  }
  return String(err);
}

/** The innermost cause's message, or '': Node's bare "fetch failed" says what went wrong only down there. */
export function rootCause(err: unknown): string {
  let cur: unknown = err instanceof Error ? err.cause : undefined;
  let found = '';
  for (let depth = 0; cur instanceof Error && depth < 8; depth += 1) {
    found = cur.message;
    cur = cur.cause;
  }
  return found;
}

/** Not the server's fault (the daemon's descriptors or memory, a held port): retried, never a startup failure. */
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
