/*
 * Reading an HTTP answer whole within a cap, so one without end costs the reader the cap, not its memory. An
 * import-free leaf of the kit, shared with the daemon.
 */

/** Reading stopped at the cap and the connection was closed. */
export class AnswerTooLargeError extends Error {
  override name = 'AnswerTooLargeError';
  constructor(
    readonly what: string,
    readonly capBytes: number,
    /** The setting that sets the cap (`Answers.HubMaxKilobytes`), where one does. */
    readonly setting?: string,
  ) {
    super(
      `${what} passed ${capText(capBytes)}, the most it may be${setting ? ` (${setting})` : ''}; it was not read ` +
        'further and its connection was closed',
    );
  }
}

/** In the project's decimal units: whole MB, whole kB, else bytes. */
function capText(bytes: number): string {
  if (bytes >= 1_000_000 && bytes % 1_000_000 === 0) return `${bytes / 1_000_000} MB`;
  if (bytes >= 1000 && bytes % 1000 === 0) return `${bytes / 1000} kB`;
  return `${bytes} bytes`;
}

/**
 * `body` whole, or AnswerTooLargeError naming `what` and `setting` past `capBytes`: leaving the loop early closes the
 * source (a fetch body cancelled, a node:http answer destroyed). The time cap is the caller's request signal.
 */
export async function readCapped(
  body: AsyncIterable<Uint8Array> | null | undefined,
  capBytes: number,
  what: string,
  setting?: string,
): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > capBytes) throw new AnswerTooLargeError(what, capBytes, setting);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
