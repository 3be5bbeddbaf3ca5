import type { SsoLink } from '../auth/oidc.ts';
import { escapeHtml } from './dashboard/page.ts';

/**
 * The login form, in the dashboard's look (its stylesheet, served at `/login.css`). No script: the form posts to
 * `/login`; `message` says why the last attempt failed, and the name typed is kept (never the password).
 */
export function loginPage(opts: { message?: string; user: string; version: string; sso?: SsoLink }): string {
  const message = opts.message ? `\n      <p class="login-message" role="alert">${escapeHtml(opts.message)}</p>` : '';
  const sso = opts.sso ? ssoLink(opts.sso) : '';
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>watchdog · log in</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/login.css">
</head>
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
