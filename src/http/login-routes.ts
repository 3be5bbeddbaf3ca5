import { join } from 'node:path';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { findUser } from '../auth/can.ts';
import { createLoginLimits, DEFAULT_LOGIN_LIMITS } from '../auth/login-limits.ts';
import { createSessionStore, DEFAULT_SESSIONS, type SessionOwner } from '../auth/sessions.ts';
import { createTotpGuard } from '../auth/totp.ts';
import { EMPTY_USERS, hasAccounts } from '../auth/users-file.ts';
import type { LoginResult } from '../bus.ts';
import { readRegularFile } from '../regular-file.ts';
import { adminFingerprint, isAdminLogin, SESSION_COOKIE, userFingerprint } from './account-access.ts';
import { ASSETS_DIR } from './dashboard/routes.ts';
import type { HttpDeps } from './deps.ts';
import { loginPage } from './login-page.ts';
import { sourceOf } from './refused.ts';
import { peerIsTrustedProxy, remoteAddress, shownKey } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

export const loginRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/login',
    tag: 'dashboard',
    access: 'none',
    summary: "the dashboard's login form (only while the users file holds accounts)",
    responses: { 200: { description: 'the page', media: 'text/html' }, ...errors(404, 405) },
  },
  {
    method: 'post',
    path: '/login',
    tag: 'dashboard',
    access: 'none',
    summary:
      'logs in (form: user, password, code for a user with TOTP): sets the session cookie and sends the browser to the dashboard',
    responses: {
      303: 'logged in: the session cookie is set, and Location is the dashboard',
      400: { description: 'no user or password in the form', media: 'text/html' },
      401: {
        description: 'wrong user name or password, or a wrong or used one-time code (the form again, saying so)',
        media: 'text/html',
      },
      403: { description: 'a cross-site request', json: 'Error' },
      ...errors(404, 405, 413),
      429: {
        description: 'too many attempts from this source, or the account is locked for now (Retry-After)',
        media: 'text/html',
      },
      503: { description: 'too many password checks at once (Retry-After)', media: 'text/html' },
    },
  },
  {
    method: 'post',
    path: '/logout',
    tag: 'dashboard',
    access: 'none',
    summary: 'ends the session the cookie names, on the daemon too, and sends the browser to the login form',
    responses: {
      303: 'logged out; Location is the login form',
      403: { description: 'a cross-site request', json: 'Error' },
      ...errors(405),
    },
  },
  {
    method: 'get',
    path: '/login.css',
    tag: 'dashboard',
    access: 'none',
    summary: "the login form's stylesheet (the dashboard's)",
    responses: { 200: { description: 'the stylesheet', media: 'text/css' }, ...errors(405) },
  },
];

/** The answer to every failed login alike: wrong name, password, or one-time code (or one used already). */
const WRONG = 'Wrong user name or password (or one-time code).';

/** Nothing but this origin's stylesheet, and the form posting to this origin. */
export const CSP = "default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** Whether the browser reached us over https: directly, or as a trusted proxy says (X-Forwarded-Proto). */
export function overHttps(c: Context, trusted: readonly string[]): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  const proto = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return proto === 'https' && peerIsTrustedProxy(c, trusted);
}

/**
 * `GET /login` (the form), `POST /login` (the session cookie: HttpOnly, SameSite=Strict, Path=/, Secure over https)
 * and `POST /logout` (the session ends on the daemon, not only in the browser). Served only while the users file
 * holds accounts: without, the daemon answers 404 here, as before there were accounts. Cross-site posts are refused
 * before this (cross-site.ts), so another site can neither log a browser in nor out.
 */
export function loginRoutes(deps: HttpDeps): Hono {
  const app = new Hono();
  const sessions = deps.sessions ?? createSessionStore(() => DEFAULT_SESSIONS);
  const limits = deps.loginLimits ?? createLoginLimits(() => DEFAULT_LOGIN_LIMITS);
  const totp = createTotpGuard();
  const accounts = () => hasAccounts(deps.users?.() ?? EMPTY_USERS);
  const page = (c: Context, status: 200 | 400 | 401 | 429 | 503, message?: string, user = '') => {
    c.header('Content-Security-Policy', CSP);
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    return c.html(loginPage({ message, user, version: deps.version, sso: deps.oidc?.link() }), status);
  };
  const told = (user: string, result: LoginResult, c: Context) =>
    deps.bus.emit('daemon:login', { user: shownKey(user), result, remote: remoteAddress(c), at: Date.now() });

  app.get('/login', (c) => (accounts() ? page(c, 200) : c.json({ error: 'not found' }, 404)));
  app.get('/login.css', async (c) => {
    if (!accounts()) return c.json({ error: 'not found' }, 404);
    const css = await readRegularFile(join(ASSETS_DIR, 'style.css'), 'utf8');
    return c.body(css, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'no-cache' });
  });

  const limit = bodyLimit({
    maxSize: 4096,
    onError: (c) => c.json({ error: 'the form is larger than 4096 bytes' }, 413),
  });
  app.post('/login', limit, async (c) => {
    const db = deps.users?.() ?? EMPTY_USERS;
    if (!hasAccounts(db)) return c.json({ error: 'not found' }, 404);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const user = typeof form.user === 'string' ? form.user : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const code = typeof form.code === 'string' ? form.code.replace(/\s/g, '') : '';
    if (user === '' || password === '') return page(c, 400, 'Give a user name and a password.', user);
    const block = limits.admit(sourceOf(remoteAddress(c)), user);
    if (block) {
      told(user, block.reason, c);
      c.header('Retry-After', String(Math.ceil(block.retryAfterMs / 1000)));
      const why = block.reason === 'limited' ? 'Too many login attempts from here' : 'This account is locked for now';
      return page(c, 429, `${why}; try again in ${Math.ceil(block.retryAfterMs / 1000)} s.`, user);
    }
    const admin = deps.admin?.();
    let owner: SessionOwner | undefined;
    if (admin && isAdminLogin(admin, user, password))
      owner = { kind: 'admin', name: admin.username, fingerprint: adminFingerprint(admin) };
    else {
      const found = await findUser(user, password, db);
      if (found === 'busy') {
        told(user, 'busy', c);
        c.header('Retry-After', '1');
        return page(c, 503, 'The watchdog is checking many passwords at once; try again in a moment.', user);
      }
      // A second factor's code is checked only after the password, and a wrong one is answered as a wrong
      // password: the page never tells a guesser that the password was right.
      if (found && found.totp !== undefined && !totp.accept(found.name, found.totp, code)) {
        limits.failed(user);
        told(user, 'wrong_code', c);
        return page(c, 401, WRONG, user);
      }
      if (found) owner = { kind: 'user', name: found.name, fingerprint: userFingerprint(found) };
    }
    if (!owner) {
      limits.failed(user);
      told(user, 'wrong_password', c);
      return page(c, 401, WRONG, user);
    }
    limits.succeeded(sourceOf(remoteAddress(c)), user);
    const id = sessions.create(owner);
    setCookie(c, SESSION_COOKIE, id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      secure: overHttps(c, deps.trustedProxies?.() ?? []),
      maxAge: Math.round((deps.sessionMinutes?.() ?? 720) * 60),
    });
    told(owner.name, 'ok', c);
    return c.redirect('/', 303);
  });

  app.post('/logout', (c) => {
    const id = getCookie(c, SESSION_COOKIE);
    const session = id === undefined ? undefined : sessions.find(id);
    if (id !== undefined && session && sessions.end(id))
      deps.bus.emit('daemon:logout', { user: session.name, remote: remoteAddress(c), at: Date.now() });
    deleteCookie(c, SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'Strict' });
    return c.redirect('/login', 303);
  });
  return app;
}
