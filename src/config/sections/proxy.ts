import { isIP } from 'node:net';
import * as v from 'valibot';

/** A `TrustedProxies` entry; null when it is neither an IP address nor a CIDR block whose prefix fits its family. */
export function parseProxyRange(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const m = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(text.trim());
  if (!m) return null;
  const address = m[1] ?? '';
  const kind = isIP(address);
  if (kind === 0) return null;
  const max = kind === 4 ? 32 : 128;
  const prefix = m[2] === undefined ? max : Number(m[2]);
  if (prefix > max) return null;
  return { address, prefix, family: kind === 4 ? 'ipv4' : 'ipv6' };
}

/** `TrustedProxies`: the peers whose `X-Forwarded-For`/`Forwarded` is believed (any client can send them). */
export const TrustedProxiesSchema = v.optional(
  v.array(
    v.pipe(
      v.string('expected an IP address or a CIDR block such as 10.0.0.0/8'),
      v.check(
        (s) => parseProxyRange(s) !== null,
        'expected an IP address or a CIDR block such as 127.0.0.1, ::1 or 10.0.0.0/8',
      ),
    ),
    'expected a list of proxy addresses such as [127.0.0.1, ::1]',
  ),
  [],
);
