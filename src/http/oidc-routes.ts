import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { LoginLimits } from '../auth/login-limits.ts';
import { PENDING_MS } from '../auth/oidc-pending.ts';
import type { SessionStore } from '../auth/sessions.ts';
import { EMPTY_USERS, hasAccounts } from '../auth/users-file.ts';
import type { HttpDeps } from './deps.ts';
import { loginAnswers, pageHead } from './login-page.ts';
import { sourceOf } from './refused.ts';
import { remoteAddress } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

export const oidcRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /login/oidc',
    tag: 'dashboard',
    access: 'none',
    summary: 'begins a login at the OpenID Connect provider (`Users.Oidc`): sends the browser there',
    responses: {
      303: "Location is the provider's authorization endpoint (PKCE, state and nonce)",
      429: { description: 'too many login attempts from this source (Retry-After)', media: 'text/html' },
      503: { description: 'the provider cannot be reached now (the login form, saying why)', media: 'text/html' },
      ...errors(404, 405),
    },
  },
  {
    route: 'get /login/oidc/callback',
    tag: 'dashboard',
    access: 'none',
    summary: "the provider's answer: checks it and the ID token, and sets the session cookie",
    responses: {
      200: {
        description: 'logged in: the session cookie is set, and the page goes on to the dashboard',
        media: 'text/html',
      },
      400: { description: 'a state not begun in this browser, altered, expired or used', media: 'text/html' },
      401: { description: 'the provider refused the login, or did not confirm it', media: 'text/html' },
      403: { description: 'the ID token names no user (Users.Oidc.UserClaim)', media: 'text/html' },
      503: { description: 'the provider cannot be reached now', media: 'text/html' },
      ...errors(404, 405),
    },
  },
];

/** The login this browser began; sent back on the provider's redirect, so SameSite=Lax. */
const STATE_COOKIE = 'watchdog_oidc_state';
const STATE_PATH = '/login/oidc';
/** The source's attempts are taken under this account, which no password login can name (it holds a NUL). */
const OIDC_ACCOUNT = '\0oidc';
/** The audit line's user for a single sign-on that named none (yet). */
const SSO_USER = '(single sign-on)';

/**
 * Goes on to the dashboard from a page of this origin. A redirect would not do: the browser arrived from the
 * provider's site, and a SameSite=Strict cookie is not sent on a redirect chain another site began.
 */
const onwardPage = `${pageHead('logged in', '<meta http-equiv="refresh" content="0;url=/">')}
<body><main><p class="panel login">Logged in. <a href="/">Go on to the dashboard</a></p></main></body>
</html>
`;

/**
 * `GET /login/oidc` and its callback: the dashboard login through an OpenID Connect provider, served while
 * `Users.Oidc` is set and the users file holds accounts. The session is for a principal `sso` with the provider's
 * user and groups, whose rights the users file's `Groups:` gives.
 */
export function oidcRoutes(deps: HttpDeps & { sessions: SessionStore; loginLimits: LoginLimits }): Hono {
  const app = new Hono();
  const { oidc, loginLimits: limits } = deps;
  const { page, told, blocked, secure, startSession } = loginAnswers(deps);
  const served = () => oidc?.link() !== undefined && hasAccounts(deps.users?.() ?? EMPTY_USERS);

  app.get('/login/oidc', async (c) => {
    if (!oidc || !served()) return c.json({ error: 'not found' }, 404);
    // Each login begun is kept until its callback: a source may begin them only as fast as it may try passwords.
    const block = limits.admit(sourceOf(remoteAddress(c)), OIDC_ACCOUNT);
    if (block) return blocked(c, block, SSO_USER, '');
    const begun = await oidc.begin();
    if (!begun.ok) {
      told(c, SSO_USER, 'unavailable');
      deps.log.warn(`single sign-on unavailable: ${begun.reason}`, { remote: remoteAddress(c) ?? null });
      return page(
        c,
        503,
        `Single sign-on is unavailable for now: ${begun.reason}. Log in with a password, or try again.`,
      );
    }
    setCookie(c, STATE_COOKIE, begun.state, {
      httpOnly: true,
      sameSite: 'Lax',
      path: STATE_PATH,
      secure: secure(c),
      maxAge: PENDING_MS / 1000,
    });
    c.header('Cache-Control', 'no-store');
    return c.redirect(begun.url, 303);
  });

  app.get('/login/oidc/callback', async (c) => {
    if (!oidc || !served()) return c.json({ error: 'not found' }, 404);
    const query = new URL(c.req.url).searchParams;
    const browserState = getCookie(c, STATE_COOKIE);
    deleteCookie(c, STATE_COOKIE, { path: STATE_PATH, httpOnly: true, sameSite: 'Lax', secure: secure(c) });
    const done = await oidc.finish(query, browserState);
    if (!done.ok) {
      told(c, SSO_USER, done.status === 503 ? 'unavailable' : 'refused');
      deps.log.warn(`single sign-on refused: ${done.reason}`, {
        status: done.status,
        remote: remoteAddress(c) ?? null,
      });
      return page(c, done.status, `Single sign-on failed: ${done.reason}.`);
    }
    startSession(c, { kind: 'sso', name: done.name, groups: done.groups, fingerprint: done.fingerprint });
    limits.succeeded(sourceOf(remoteAddress(c)), OIDC_ACCOUNT);
    told(c, done.name, 'ok');
    return page(c, 200, undefined, '', onwardPage);
  });
  return app;
}
