import type * as Client from 'openid-client';
import type { AnswerCap } from '../config/sections/answers.ts';
import { isLoopbackUrl, type OidcSettings } from '../config/sections/oidc.ts';
import { describeError } from '../errors.ts';
import { readCapped } from '../kit/capped-body.ts';
import { createPendingLogins } from './oidc-pending.ts';
import { sha256 } from './sessions.ts';

/** `Users.Oidc` and the secret its `ClientSecretFile` holds; undefined while OpenID Connect is off. */
export interface OidcSetup {
  settings: OidcSettings;
  secret: string | undefined;
}

/** A login the provider vouched for, or why it is refused (the login page says `reason`; nothing secret is in it). */
export type OidcFinish =
  | { ok: true; name: string; groups: string[]; fingerprint: string }
  | { ok: false; status: 400 | 401 | 403 | 503; reason: string };

/** Single sign-on's link under the login form: its label, and why it is unavailable now, if it is. */
export interface SsoLink {
  name: string;
  unavailable?: string;
}

export type OidcLogin = ReturnType<typeof createOidcLogin>;

/** A provider's answer that did not come within the time cap. */
class ProviderTimeoutError extends Error {
  override name = 'ProviderTimeoutError';
}

/**
 * openid-client's fetch, every request capped in time (body included) and size (read whole before openid-client
 * sees it), so a slow or endless provider costs a login attempt, never the daemon's memory.
 */
function cappedProviderFetch(capOf: () => AnswerCap): Client.CustomFetch {
  return async (url, init) => {
    const { timeoutMs, maxBytes, setting } = capOf();
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const where = `the provider's answer from ${new URL(url).origin}${new URL(url).pathname}`;
    try {
      const res = await fetch(url, { ...init, body: init.body as RequestInit['body'], signal });
      const body = await readCapped(res.body, maxBytes, where, setting);
      // A null-body status (204, 304) takes no body, not even an empty one.
      const empty = body.length === 0 && [101, 204, 205, 304].includes(res.status);
      return new Response(empty ? null : body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    } catch (err) {
      if (timeout.aborted)
        throw new ProviderTimeoutError(`${where} did not come within ${timeoutMs / 1000} s`, { cause: err });
      throw err;
    }
  };
}
/** The provider and client a session or a login came through: a change of either ends them. */
export const oidcFingerprint = (s: OidcSettings): string => sha256(`oidc\0${s.Issuer}\0${s.ClientId}`);

/** A name from the provider: as long as a header's, without control characters (it goes to the audit log). */
const USABLE_NAME = /^[^\p{Cc}]{1,256}$/u;
const MAX_GROUPS = 256;

/** The groups claim: a list of names (a lone string is one group); other values are skipped. */
function groupsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  return list
    .filter((g): g is string => typeof g === 'string' && USABLE_NAME.test(g))
    .map((g) => g.trim())
    .filter((g) => g !== '')
    .slice(0, MAX_GROUPS);
}

/** openid-client (with jose), loaded at the first sign-in: a daemon without `Users.Oidc` never loads it. */
let loading: Promise<typeof Client> | undefined;
const openidClient = (): Promise<typeof Client> => {
  loading ??= import('openid-client');
  return loading;
};

/** An error's text for a refusal, one line and short: the provider may put anything in it. */
const said = (err: unknown) => describeError(err).replace(/\s+/g, ' ').slice(0, 300);

/**
 * Dashboard login through an OpenID Connect provider (openid-client, on jose): discovery once per provider, the
 * authorization code flow with PKCE, and the ID token checked for issuer, audience, nonce and signature (its JWKS).
 */
export function createOidcLogin(opts: {
  setup: () => OidcSetup | undefined;
  /** The caps of every request to the provider (`Answers.Oidc…`), read at each. */
  cap: () => AnswerCap;
}) {
  const pending = createPendingLogins();
  const providerFetch = cappedProviderFetch(opts.cap);
  let cached: { key: string; config: Promise<Client.Configuration> } | undefined;
  let lastFailure: string | undefined;

  const configOf = (setup: OidcSetup): Promise<Client.Configuration> => {
    const { settings: s, secret } = setup;
    const key = JSON.stringify([s.Issuer, s.ClientId, secret ?? null]);
    if (cached?.key === key) return cached.config;
    const issuer = new URL(s.Issuer);
    const config = openidClient().then((client) => {
      const execute = [client.enableNonRepudiationChecks];
      // The schema allows http for a loopback issuer only; checked again here, where the exception is made.
      if (issuer.protocol === 'http:' && isLoopbackUrl(issuer)) execute.push(client.allowInsecureRequests);
      return client.discovery(
        issuer,
        s.ClientId,
        secret,
        secret === undefined ? client.None() : client.ClientSecretBasic(secret),
        { [client.customFetch]: providerFetch, execute, timeout: opts.cap().timeoutMs / 1000 },
      );
    });
    const entry = { key, config };
    cached = entry;
    config.then(
      () => {
        lastFailure = undefined;
      },
      (err: unknown) => {
        lastFailure = `${s.Issuer} could not be reached or is not an OpenID provider (${said(err)})`;
        // Not kept: the next login asks the provider again.
        if (cached === entry) cached = undefined;
      },
    );
    return config;
  };
  /** The provider's configuration, or the refusal (503) saying why it cannot be had now. */
  const reach = (setup: OidcSetup) =>
    configOf(setup).then(
      (config) => ({ ok: true, config }) as const,
      (err: unknown) => ({ ok: false, status: 503, reason: lastFailure ?? said(err) }) as const,
    );

  return {
    /** A new login: the provider's authorization URL (PKCE S256, state, nonce), its state kept here. */
    async begin(): Promise<{ ok: true; url: string; state: string } | { ok: false; status: 503; reason: string }> {
      const setup = opts.setup();
      if (!setup) return { ok: false, status: 503, reason: 'single sign-on is not configured' };
      const reached = await reach(setup);
      if (!reached.ok) return reached;
      const s = setup.settings;
      const client = await openidClient();
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      pending.add(state, { verifier, nonce, fingerprint: oidcFingerprint(s) });
      const url = client.buildAuthorizationUrl(reached.config, {
        redirect_uri: s.RedirectUrl,
        scope: s.Scopes.join(' '),
        response_type: 'code',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { ok: true, url: url.href, state };
    },

    /** The callback: `query` as the provider sent it, `browserState` what the begun login left in the browser. */
    async finish(query: URLSearchParams, browserState: string | undefined): Promise<OidcFinish> {
      const setup = opts.setup();
      if (!setup) return { ok: false, status: 400, reason: 'single sign-on is not configured' };
      const s = setup.settings;
      const state = query.get('state') ?? '';
      if (state === '' || browserState === undefined || state !== browserState)
        return {
          ok: false,
          status: 400,
          reason: 'this sign-in was not begun in this browser, or its state was altered; sign in again',
        };
      const login = pending.take(state);
      if (!login || login.fingerprint !== oidcFingerprint(s))
        return { ok: false, status: 400, reason: 'this sign-in has expired or was already used; sign in again' };
      const error = query.get('error');
      if (error !== null) {
        const description = query.get('error_description');
        const why = `${error}${description ? `: ${description}` : ''}`.replace(/\s+/g, ' ').slice(0, 300);
        return { ok: false, status: 401, reason: `${s.Name} refused the sign-in (${why})` };
      }
      const reached = await reach(setup);
      if (!reached.ok) return reached;
      // The URL the provider sent the browser to, as registered: behind a proxy the request's own URL differs.
      const current = new URL(s.RedirectUrl);
      current.search = query.toString();
      let claims: Record<string, unknown> | undefined;
      try {
        const client = await openidClient();
        const tokens = await client.authorizationCodeGrant(reached.config, current, {
          pkceCodeVerifier: login.verifier,
          expectedState: state,
          expectedNonce: login.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims();
      } catch (err) {
        return { ok: false, status: 401, reason: `${s.Name} did not confirm the sign-in (${said(err)})` };
      }
      const name = claims?.[s.UserClaim];
      if (typeof name !== 'string' || !USABLE_NAME.test(name.trim()))
        return {
          ok: false,
          status: 403,
          reason:
            `${s.Name} sent no usable ${s.UserClaim} claim in its ID token; have it send one, or name another ` +
            'claim in Users.Oidc.UserClaim',
        };
      return {
        ok: true,
        name: name.trim(),
        groups: groupsOf(claims?.[s.GroupsClaim]),
        fingerprint: oidcFingerprint(s),
      };
    },

    /** The login page's link while `Users.Oidc` is set. */
    link(): SsoLink | undefined {
      const name = opts.setup()?.settings.Name;
      if (name === undefined) return undefined;
      return lastFailure === undefined ? { name } : { name, unavailable: lastFailure };
    },
  };
}
