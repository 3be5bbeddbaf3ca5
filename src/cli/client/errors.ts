// Apart from http.ts so that main.ts, loaded by every command (the daemon too), does not load ofetch.
/** A CLI failure a person can act on: `message` is printed without the cause chain, and the exit is `exitCode`. */
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
