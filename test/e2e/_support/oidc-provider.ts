import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/**
 * How the provider's server answers: as the provider; 503 to everything (down); a body without end; or as the
 * provider but with its JWKS swapped for another key under the same key id (its ID tokens then fail to verify).
 */
export type Mode = 'provider' | 'down' | 'endless' | 'forged-jwks';

/** A real OpenID provider (oidc-provider) on 127.0.0.1: its issuer URL, and a way to close it. */
export interface TestProvider {
  issuer: string;
  /** How it answers every request from now on. */
  answer(mode: Mode): void;
  close(): Promise<void>;
}

/** The groups each account of the test provider is in (any login name is an account; unknown ones are in none). */
export const GROUPS: Record<string, string[]> = { alice: ['mods', 'nobody-knows-this'] };

/**
 * Starts oidc-provider with one confidential client whose only redirect URI is `redirectUri`. Its accounts
 * carry `preferred_username` (the login name, or nothing for `nameless`) and `groups`; its development
 * interactions (a login form taking any name, then a consent form) are what the test's browser fills in.
 */
export async function startProvider(client: {
  id: string;
  secret: string;
  redirectUri: string;
}): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.id,
        client_secret: client.secret,
        redirect_uris: [client.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups'] },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    async findAccount(_ctx, sub) {
      return {
        accountId: sub,
        claims: () => ({
          sub,
          ...(sub === 'nameless' ? {} : { preferred_username: sub }),
          groups: GROUPS[sub] ?? [],
        }),
      };
    },
    // The ID token carries the profile claims itself: the daemon reads them there, not from userinfo.
    conformIdTokenClaims: false,
  });
  const callback = provider.callback();
  let mode: Mode = 'provider';
  let forged: string | undefined;
  server.on('request', (req, res) => {
    if (mode === 'forged-jwks' && req.url === '/jwks' && forged !== undefined)
      return res.writeHead(200, { 'content-type': 'application/json' }).end(forged);
    if (mode === 'provider' || mode === 'forged-jwks') return callback(req, res);
    if (mode === 'down') return res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const more = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', more);
    };
    res.write('{"issuer":');
    more();
  });
  const real = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: Array<{ kid?: string; alg?: string }> };
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
  forged = JSON.stringify({ keys: real.keys.map((k) => ({ ...other, kid: k.kid, alg: k.alg, use: 'sig' })) });
  return {
    issuer,
    answer: (next) => {
      mode = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Cookies as a browser keeps them for one origin (names only; paths and expiry do not matter to these tests). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Goes through the provider's side of a login as a browser would, from its authorization URL: follows its
 * redirects, fills in its login form with `login` and its consent form, and returns the URL it finally sends the
 * browser to (the daemon's callback, not followed).
 */
export async function signInAtProvider(authUrl: string, login: string): Promise<URL> {
  const jar = new CookieJar();
  let url = new URL(authUrl);
  let init: RequestInit = { method: 'GET' };
  for (let step = 0; step < 12; step++) {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: jar.header() } });
    jar.take(res);
    const location = res.headers.get('location');
    if (location !== null) {
      await res.arrayBuffer();
      const next = new URL(location, url);
      if (next.origin !== url.origin) return next;
      url = next;
      init = { method: 'GET' };
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`the provider answered ${res.status} at ${url.pathname}: ${html}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`no form at ${url.pathname}: ${html.slice(0, 500)}`);
    const form = new URLSearchParams({ prompt, ...(prompt === 'login' ? { login, password: 'any' } : {}) });
    url = new URL(action, url);
    init = { method: 'POST', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('the provider never sent the browser back');
}
