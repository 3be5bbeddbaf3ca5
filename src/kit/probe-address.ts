/**
 * Server addresses as the launcher reads them (its `UriHelper.cs`): no `://` → `ss14://`;
 * `ss14` → `http` with default port 1212; `ss14s` → `https` with default 443; the path is kept and a `/`
 * appended; `/status` and `/info` are resolved against that (so a query or fragment is dropped).
 * `http://` and `https://` addresses pass through unchanged, with their usual default ports.
 */

export class AddressError extends Error {
  override name = 'AddressError';
}

export interface ServerAddress {
  /** The API base, always ending in `/`. */
  api: URL;
  statusUrl: URL;
  infoUrl: URL;
}

const SCHEMES: Record<string, { http: 'http' | 'https'; defaultPort: string | null }> = {
  ss14: { http: 'http', defaultPort: '1212' },
  ss14s: { http: 'https', defaultPort: null },
  http: { http: 'http', defaultPort: null },
  https: { http: 'https', defaultPort: null },
};

export function normaliseAddress(input: string): ServerAddress {
  const raw = input.trim();
  if (raw === '') throw new AddressError('no server address given (e.g. 127.0.0.1:1212 or ss14://play.example)');
  if (/\s/.test(raw)) throw new AddressError(`"${raw}" is not a server address: it contains spaces`);
  const withScheme = raw.includes('://') ? raw : `ss14://${raw}`;
  let parsed: URL;
  try {
    // ss14/ss14s are not "special" schemes for WHATWG URL, so a typed port such as :80 survives here.
    parsed = new URL(withScheme);
  } catch (err) {
    throw new AddressError(`"${raw}" is not a valid server address`, { cause: err });
  }
  const scheme = parsed.protocol.slice(0, -1).toLowerCase();
  const kind = SCHEMES[scheme];
  if (!kind)
    throw new AddressError(
      `"${raw}": scheme ${scheme}:// is not supported; use ss14://, ss14s://, http:// or https://`,
    );
  if (parsed.hostname === '') throw new AddressError(`"${raw}" has no host`);
  if (parsed.port === '0') throw new AddressError(`"${raw}": port 0 is not a server port`);
  let api: URL;
  try {
    api = new URL(`${kind.http}://${parsed.host}`);
  } catch (err) {
    throw new AddressError(`"${raw}" has an invalid host`, { cause: err });
  }
  if (parsed.port === '' && kind.defaultPort !== null) api.port = kind.defaultPort;
  api.pathname = parsed.pathname.endsWith('/') ? parsed.pathname : `${parsed.pathname}/`;
  return { api, statusUrl: new URL('status', api), infoUrl: new URL('info', api) };
}

/**
 * The address a launcher connects to when `/info` has no connect address (its `Connector.cs`): the host
 * and port of the info URL, e.g. `udp://h:443/` for `ss14s://h`.
 */
export function derivedConnectAddress(infoUrl: URL): string {
  const port = infoUrl.port || (infoUrl.protocol === 'https:' ? '443' : '80');
  return `udp://${infoUrl.hostname}:${port}/`;
}
