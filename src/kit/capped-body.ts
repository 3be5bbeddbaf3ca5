/**
 * Reading an HTTP answer whole, with a size cap enforced while it arrives: a server, hub or CDN that answers without
 * end (or with gigabytes) costs the reader at most the cap, not its memory. An import-free leaf of the kit, so the
 * kit (its check-in) and the daemon (every answer it reads from a server, a hub, a CDN or a webhook) share it.
 */

/** An answer longer than its reader's cap: reading stopped there and the connection was closed. */
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

/** A cap as a person writes it, in the decimal units the project uses everywhere: whole MB, whole kB, else bytes. */
export function capText(bytes: number): string {
  if (bytes >= 1_000_000 && bytes % 1_000_000 === 0) return `${bytes / 1_000_000} MB`;
  if (bytes >= 1000 && bytes % 1000 === 0) return `${bytes / 1000} kB`;
  return `${bytes} bytes`;
}

/**
 * `body` whole (null: empty), or AnswerTooLargeError naming `what` (the answer and its URL) and `setting` (the key
 * that sets the cap, if any) once more than `capBytes` arrived. Leaving the loop early closes the source: a fetch body is cancelled, a node:http answer destroyed, and
 * either way its connection is dropped, so the sender cannot keep it busy. The time cap is the caller's: the signal
 * of its request covers the body as well.
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
