import { join } from 'node:path';
import { Hono } from 'hono';
import { deleteCookie, getCookie } from 'hono/cookie';
import { findUser } from '../auth/can.ts';
import type { LoginLimits } from '../auth/login-limits.ts';
import type { SessionOwner, SessionStore } from '../auth/sessions.ts';
import { createTotpGuard } from '../auth/totp.ts';
import { EMPTY_USERS, hasAccounts } from '../auth/users-file.ts';
import { readRegularFile } from '../regular-file.ts';
import { adminFingerprint, isAdminLogin, SESSION_COOKIE, userFingerprint } from './account-access.ts';
import { ASSETS_DIR } from './dashboard/routes.ts';
import type { HttpDeps } from './deps.ts';
import { loginAnswers } from './login-page.ts';
import { sourceOf } from './refused.ts';
import { limitBody, remoteAddress } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

export const loginRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /login',
    tag: 'dashboard',
    access: 'none',
    summary: "the dashboard's login form (only while the users file holds accounts)",
    responses: { 200: { description: 'the page', media: 'text/html' }, ...errors(404, 405) },
  },
  {
    route: 'post /login',
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
      403: 'a cross-site request',
      ...errors(404, 405, 413),
      429: {
        description: 'too many attempts from this source, or the account is locked for now (Retry-After)',
        media: 'text/html',
      },
      503: { description: 'too many password checks at once (Retry-After)', media: 'text/html' },
    },
  },
  {
    route: 'post /logout',
    tag: 'dashboard',
    access: 'none',
    summary: 'ends the session the cookie names, on the daemon too, and sends the browser to the login form',
    responses: {
      303: 'logged out; Location is the login form',
      403: 'a cross-site request',
      ...errors(405),
    },
  },
  {
    route: 'get /login.css',
    tag: 'dashboard',
    access: 'none',
    summary: "the login form's stylesheet (the dashboard's)",
    responses: { 200: { description: 'the stylesheet', media: 'text/css' }, ...errors(405) },
  },
];

/** Every failed login alike: the page never tells a guesser which part was right. */
const WRONG = 'Wrong user name or password (or one-time code).';

/**
 * `GET|POST /login` and `POST /logout` (the session ends on the daemon too); 404 while the users file holds no
 * accounts. Cross-site posts are refused before this, so another site can neither log a browser in nor out.
 */
export function loginRoutes(deps: HttpDeps & { sessions: SessionStore; loginLimits: LoginLimits }): Hono {
  const app = new Hono();
  const { sessions, loginLimits: limits } = deps;
  const { page, told, blocked, startSession } = loginAnswers(deps);
  const totp = createTotpGuard();
  const accounts = () => hasAccounts(deps.users?.() ?? EMPTY_USERS);

  app.get('/login', (c) => (accounts() ? page(c, 200) : c.json({ error: 'not found' }, 404)));
  app.get('/login.css', async (c) => {
    if (!accounts()) return c.json({ error: 'not found' }, 404);
    const css = await readRegularFile(join(ASSETS_DIR, 'style.css'), 'utf8');
    return c.body(css, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'no-cache' });
  });

  app.post('/login', limitBody(4096, 'form'), async (c) => {
    const db = deps.users?.() ?? EMPTY_USERS;
    if (!hasAccounts(db)) return c.json({ error: 'not found' }, 404);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const user = typeof form.user === 'string' ? form.user : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const code = typeof form.code === 'string' ? form.code.replace(/\s/g, '') : '';
    if (user === '' || password === '') return page(c, 400, 'Give a user name and a password.', user);
    const block = limits.admit(sourceOf(remoteAddress(c)), user);
    if (block) return blocked(c, block, user);
    const admin = deps.admin?.();
    let owner: SessionOwner | undefined;
    let failure: 'wrong_password' | 'wrong_code' = 'wrong_password';
    if (admin && isAdminLogin(admin, user, password))
      owner = { kind: 'admin', name: admin.username, fingerprint: adminFingerprint(admin) };
    else {
      const found = await findUser(user, password, db);
      if (found === 'busy') {
        told(c, user, 'busy');
        c.header('Retry-After', '1');
        return page(c, 503, 'The watchdog is checking many passwords at once; try again in a moment.', user);
      }
      // A second factor's code is checked only after the password, and a wrong one is answered as a wrong password.
      if (found && found.totp !== undefined && !totp.accept(found.name, found.totp, code)) failure = 'wrong_code';
      else if (found) owner = { kind: 'user', name: found.name, fingerprint: userFingerprint(found) };
    }
    if (!owner) {
      limits.failed(user);
      told(c, user, failure);
      return page(c, 401, WRONG, user);
    }
    limits.succeeded(sourceOf(remoteAddress(c)), user);
    startSession(c, owner);
    told(c, owner.name, 'ok');
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
