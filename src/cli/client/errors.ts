// Kept apart from http.ts so that main.ts, loaded by every command (the daemon too), does not load ofetch.
/**
 * A CLI failure a person can act on. The command prints `message` as is and exits with `exitCode`
 * (1 refused or failed, 2 usage or config), without the cause chain that `describeError` would append.
 */
export class ClientError extends Error {
  override name = 'ClientError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
