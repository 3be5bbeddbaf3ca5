import * as v from 'valibot';
import { isLoopback } from '../listen.ts';
import { text as NonEmpty } from '../numbers.ts';

/** The callback path the daemon serves (src/http/oidc-routes.ts); `RedirectUrl` must end with it. */
export const OIDC_CALLBACK_PATH = '/login/oidc/callback';

/** `localhost` or a loopback address, the only hosts a plain-http issuer may have (a provider started by a test). */
export function isLoopbackUrl(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || isLoopback(host);
}

const parsed = (text: string): URL | undefined => (URL.canParse(text) ? new URL(text) : undefined);

const ClaimName = v.pipe(
  v.string('expected a claim name'),
  v.regex(/^[A-Za-z0-9_.:/-]{1,128}$/, 'expected a claim name (letters, digits, "_", ".", ":", "/" and "-")'),
);

/** `Users.Oidc`: plain http only on loopback, where nothing on the network can read or alter the exchange. */
export const OidcSchema = v.strictObject(
  {
    Issuer: v.pipe(
      NonEmpty('the provider’s issuer URL'),
      v.check((s) => {
        const u = parsed(s);
        return u !== undefined && (u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackUrl(u)));
      }, 'expected an https URL such as https://sso.example/realms/main (plain http only on 127.0.0.1 or localhost)'),
    ),
    ClientId: NonEmpty('the client id the provider gave this watchdog'),
    // Absent: a public client, which PKCE alone protects (the provider must allow it).
    ClientSecretFile: v.optional(NonEmpty('a file path')),
    RedirectUrl: v.pipe(
      NonEmpty('this watchdog’s public callback URL'),
      v.check((s) => {
        const u = parsed(s);
        return u !== undefined && /^https?:$/.test(u.protocol) && u.pathname === OIDC_CALLBACK_PATH && !u.search;
      }, `expected this watchdog's public URL ending in ${OIDC_CALLBACK_PATH}, such as https://watchdog.example${OIDC_CALLBACK_PATH}`),
    ),
    Scopes: v.optional(
      v.pipe(
        v.array(v.pipe(v.string('expected a scope'), v.regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'expected a scope'))),
        v.check((list) => list.includes('openid'), 'expected a list of scopes that includes openid'),
      ),
      ['openid', 'profile'],
    ),
    UserClaim: v.optional(ClaimName, 'preferred_username'),
    GroupsClaim: v.optional(ClaimName, 'groups'),
    Name: v.optional(v.pipe(NonEmpty('a label'), v.maxLength(64, 'expected at most 64 characters')), 'single sign-on'),
  },
  'expected a map with Issuer, ClientId, ClientSecretFile, RedirectUrl, Scopes, UserClaim, GroupsClaim and Name',
);

export type OidcSettings = v.InferOutput<typeof OidcSchema>;
