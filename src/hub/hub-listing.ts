import { describeError } from '../errors.ts';

/**
 * Whether a hub lists a server now: `GET <hub>api/servers/info?url=<address>` of SS14.ServerHub answers the
 * server's `/info` while its advertisement has not expired (3 minutes after its last advertise) and 404 otherwise.
 * One small request per hub, instead of the whole `GET api/servers` list (hundreds of servers).
 */
export type Listing = 'listed' | 'missing';

export class HubUnreachableError extends Error {
  override name = 'HubUnreachableError';
}

/** The listing address, built as the engine builds its advertise address: the hub URL as text, then the path. */
export const infoUrl = (hubUrl: string, address: string): string =>
  `${hubUrl}api/servers/info?url=${encodeURIComponent(address)}`;

export async function checkListing(
  hubUrl: string,
  address: string,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<Listing> {
  const url = infoUrl(hubUrl, address);
  const signal = opts.signal
    ? AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)])
    : AbortSignal.timeout(opts.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { signal, headers: { Accept: 'application/json' } });
  } catch (err) {
    throw new HubUnreachableError(`cannot reach the hub at ${url}: ${describeError(err)}`, { cause: err });
  }
  // Bodies are small (/info, at most 10 KiB at the hub); read to free the connection.
  await res.arrayBuffer().catch(() => undefined);
  if (res.status === 200) return 'listed';
  if (res.status === 404) return 'missing';
  throw new HubUnreachableError(`the hub at ${url} answered HTTP ${res.status}`);
}
