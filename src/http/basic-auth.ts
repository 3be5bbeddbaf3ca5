/** `missing`: no header or another scheme (401 with the challenge); `malformed`: not base64 of `user:password`. */
type BasicCredentials = { kind: 'ok'; user: string; password: string } | { kind: 'missing' } | { kind: 'malformed' };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strict base64: Buffer.from(…, 'base64') silently skips garbage, which would turn junk into credentials. */
function decodeBase64(text: string): Uint8Array | null {
  const s = text.replace(/[\t\n\r ]/g, '');
  if (!BASE64.test(s)) return null;
  if (s.includes('=') ? s.length % 4 !== 0 : s.length % 4 === 1) return null;
  return Buffer.from(s, 'base64');
}

/**
 * RFC 7617. The password is everything after the FIRST colon, so tokens containing `:` work (the real watchdog's
 * `AuthorizationUtility.cs` splits on every colon and refuses them).
 */
export function parseBasicAuth(header: string | undefined | null): BasicCredentials {
  if (!header) return { kind: 'missing' };
  const m = /^[\t ]*([^\t ]+)(?:[\t ]+(.*))?$/s.exec(header);
  if (m?.[1]?.toLowerCase() !== 'basic') return { kind: 'missing' };
  const bytes = decodeBase64(m[2] ?? '');
  if (!bytes) return { kind: 'malformed' };
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { kind: 'malformed' };
  }
  const colon = text.indexOf(':');
  if (colon < 0) return { kind: 'malformed' };
  return { kind: 'ok', user: text.slice(0, colon), password: text.slice(colon + 1) };
}

export const WWW_AUTHENTICATE = 'Basic realm="watchdog"';
