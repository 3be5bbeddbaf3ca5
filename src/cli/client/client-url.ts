/** The daemon's default address when neither `--url` nor a local `Urls` says otherwise (ASP.NET's default). */
export const DEFAULT_URL = 'http://localhost:5000';

/** Hosts that mean "every interface" in a listen address; a client reaches them on this machine. */
const WILDCARD_HOSTS = new Set(['*', '+', '0.0.0.0', '[::]', '::']);

/**
 * The address a client on this machine uses to reach a daemon listening on `Urls`
 * (`http://*:5000` → `http://localhost:5000`). `Urls` may list several addresses separated by `;`
 * (as in ASP.NET); the first one is used. Port 0 (a port picked at start) cannot be derived.
 */
export function clientUrlFromUrls(urls: string): { url: string } | { problem: string } {
  const first = urls
    .split(';')
    .map((u) => u.trim())
    .find((u) => u !== '');
  if (!first) return { problem: 'Urls is empty' };
  // Not `new URL()`: `http://+:5000` and `http://*:5000` are valid listen addresses but not valid URLs.
  const m = /^(https?):\/\/(\[[^\]]*\]|[^/:[\]]+)(?::(\d+))?\/?$/i.exec(first);
  if (!m) return { problem: `Urls "${first}" is not an address such as http://localhost:5000` };
  const [, rawScheme = '', rawHost = '', port] = m;
  const scheme = rawScheme.toLowerCase();
  const host = WILDCARD_HOSTS.has(rawHost) ? 'localhost' : rawHost;
  if (port !== undefined && Number(port) === 0) {
    return {
      problem: `Urls "${first}" uses port 0 (a free port picked when the daemon starts); pass --url with the address the daemon logged`,
    };
  }
  return { url: port === undefined ? `${scheme}://${host}` : `${scheme}://${host}:${Number(port)}` };
}

/** `--url` as given, without a trailing slash, so messages and request paths read cleanly. */
export function normaliseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}
