/** Where the HTTP server binds, from `Urls`. */
export interface ListenAddress {
  host: string;
  port: number;
}

export type UrlsResult =
  | { ok: true; listen: ListenAddress; ignored: string[] }
  | { ok: false; expected: string };

const EXPECTED = 'expected http://<host>:<port> such as http://localhost:5000 or http://*:5000';

/**
 * Parses `Urls` as Kestrel spells it: `*` or `+` listen on every interface, `localhost` on loopback only,
 * port 0 picks a free port (tests). Only the first of a `;`-separated list is used; the rest are returned.
 */
export function parseUrls(value: string): UrlsResult {
  const [first = '', ...rest] = value.split(';').map((s) => s.trim()).filter((s) => s !== '');
  const m = /^(https?):\/\/(\[[0-9A-Fa-f:.]+\]|[^/:[\]\s]+):(\d{1,5})\/?$/.exec(first);
  if (!m) return { ok: false, expected: EXPECTED };
  const [, scheme, rawHost = '', rawPort = ''] = m;
  if (scheme?.toLowerCase() === 'https') {
    return { ok: false, expected: 'expected an http:// address (this watchdog does not terminate TLS; put a proxy in front for https)' };
  }
  const port = Number(rawPort);
  if (port > 65535) return { ok: false, expected: `${EXPECTED} (port 0-65535)` };
  let host = rawHost;
  if (host === '*' || host === '+') host = '0.0.0.0';
  else if (host.toLowerCase() === 'localhost') host = '127.0.0.1';
  else if (host.startsWith('[')) host = host.slice(1, -1);
  return { ok: true, listen: { host, port }, ignored: rest };
}
