import type { Context } from 'hono';
import { setCookie } from 'hono/cookie';
import type { LoginBlock } from '../auth/login-limits.ts';
import type { SsoLink } from '../auth/oidc.ts';
import type { SessionOwner, SessionStore } from '../auth/sessions.ts';
import type { LoginResult } from '../bus.ts';
import { SESSION_COOKIE } from './account-access.ts';
import { escapeHtml } from './dashboard/page.ts';
import type { HttpDeps } from './deps.ts';
import { clientOf, remoteAddress, shownKey } from './request-info.ts';

/** Nothing but this origin's stylesheet, and the form posting to this origin. */
const CSP = "default-src 'none'; style-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** Over https: directly, or as a trusted proxy says (X-Forwarded-Proto). */
function secure(c: Context): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  const proto = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return proto === 'https' && clientOf(c).trustedPeer;
}

/** What the password and the single sign-on logins both answer with. */
export function loginAnswers(deps: HttpDeps & { sessions: SessionStore }) {
  /** A page of the login's own (the form saying `message`, or `html`), never cached, framed or run as another type. */
  const page = (c: Context, status: 200 | 400 | 401 | 403 | 429 | 503, message?: string, user = '', html?: string) => {
    c.header('Content-Security-Policy', CSP);
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    return c.html(html ?? loginPage({ message, user, version: deps.version, sso: deps.oidc?.link() }), status);
  };
  const told = (c: Context, user: string, result: LoginResult) =>
    deps.bus.emit('daemon:login', { user: shownKey(user), result, remote: remoteAddress(c), at: Date.now() });
  return {
    page,
    told,
    secure,
    /** A source out of attempts or an account locked for now: 429 with Retry-After, told as such. */
    blocked(c: Context, block: LoginBlock, user: string, shownUser = user) {
      told(c, user, block.reason);
      const seconds = Math.ceil(block.retryAfterMs / 1000);
      c.header('Retry-After', String(seconds));
      const why = block.reason === 'limited' ? 'Too many login attempts from here' : 'This account is locked for now';
      return page(c, 429, `${why}; try again in ${seconds} s.`, shownUser);
    },
    /** A new session for `owner`, its cookie HttpOnly, SameSite=Strict, Path=/, Secure over https. */
    startSession(c: Context, owner: SessionOwner) {
      setCookie(c, SESSION_COOKIE, deps.sessions.create(owner), {
        httpOnly: true,
        sameSite: 'Strict',
        path: '/',
        secure: secure(c),
        maxAge: Math.round((deps.sessionMinutes?.() ?? 720) * 60),
      });
    },
  };
}

/** The start of a login page up to its body, in the dashboard's look; `meta` goes after the charset. */
export const pageHead = (title: string, meta: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  ${meta}
  <title>watchdog · ${title}</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/login.css">
</head>`;

/** The login form, in the dashboard's look and without script; the name typed is kept (never the password). */
function loginPage(opts: { message?: string; user: string; version: string; sso?: SsoLink }): string {
  const message = opts.message ? `\n      <p class="login-message" role="alert">${escapeHtml(opts.message)}</p>` : '';
  const sso = opts.sso ? ssoLink(opts.sso) : '';
  return `${pageHead('log in', '<meta name="viewport" content="width=device-width, initial-scale=1">')}
<body>
  <header class="top">
    <h1>watchdog</h1>
    <span class="muted">v${escapeHtml(opts.version)}</span>
  </header>
  <main>
    <form class="panel login" method="post" action="/login">
      <h2>Log in</h2>${message}
      <label>User <input name="user" autocomplete="username" required value="${escapeHtml(opts.user)}"${opts.user ? '' : ' autofocus'}></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" required${opts.user ? ' autofocus' : ''}></label>
      <label>One-time code <input name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" maxlength="7" placeholder="if your account has one"></label>
      <button type="submit">Log in</button>${sso}
    </form>
  </main>
</body>
</html>
`;
}

function ssoLink(sso: SsoLink): string {
  const link = `\n      <p class="login-sso"><a href="/login/oidc">Sign in with ${escapeHtml(sso.name)}</a></p>`;
  if (sso.unavailable === undefined) return link;
  return `${link}\n      <p class="login-message">${escapeHtml(`${sso.name} is unavailable for now: ${sso.unavailable}`)}</p>`;
}
