import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import type * as v from 'valibot';
import { parseBearer } from '../auth/api-keys.ts';
import { findApiKey, findUser, type Principal } from '../auth/can.ts';
import { type Session, type SessionStore, sha256 } from '../auth/sessions.ts';
import { TOTP_BASIC_REFUSED } from '../auth/totp.ts';
import type { UserAccount, UsersDb } from '../auth/users-file.ts';
import type { ResolvedConfig } from '../config/resolved.ts';
import type { UsersSchema } from '../config/sections/users.ts';
import { sameSecret } from '../kit/api-watchdog.ts';
import { parseBasicAuth } from './basic-auth.ts';
import { clientOf } from './request-info.ts';

export type AdminCredentials = NonNullable<ResolvedConfig['admin']>;
export type TrustedHeaders = NonNullable<v.InferOutput<typeof UsersSchema>['TrustedHeaders']>;

/** The user a proxy in TrustedProxies vouches for: from anyone else the header means nothing. */
function vouchedFor(c: Context, headers: TrustedHeaders | undefined): Principal | undefined {
  const name = headers && c.req.header(headers.User)?.trim();
  if (!headers || !name || name.length > 256 || !clientOf(c).trustedPeer) return undefined;
  const groups = (c.req.header(headers.Groups) ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  return { kind: 'sso', name, groups };
}

/** The dashboard's session cookie (login-routes.ts sets it). */
export const SESSION_COOKIE = 'watchdog_session';

type Refused = { ok: false; status: 400 | 401 | 503; error: string };

/** What the Admin login's session remembers of its password: a digest, so a changed password ends the session. */
export const adminFingerprint = (a: AdminCredentials): string => sha256(`${a.username}\0${a.password}`);

/** A user's login as the users file holds it: a new password, or a one-time code turned on or off, ends sessions. */
export const userFingerprint = (u: UserAccount): string => sha256(`${u.passwordHash}\0${u.totp ?? ''}`);

/** Whom a session speaks for now, or undefined once its owner is gone or has another password. */
export function sessionPrincipal(s: Session, db: UsersDb, admin: AdminCredentials | undefined): Principal | undefined {
  if (s.kind === 'admin') {
    if (!admin || admin.username !== s.name || !sameSecret(adminFingerprint(admin), s.fingerprint)) return undefined;
    return { kind: 'admin', name: admin.username };
  }
  // Its rights are asked of the users file at each request (can()); a change of provider ends it (src/daemon/run.ts).
  if (s.kind === 'sso') return { kind: 'sso', name: s.name, groups: s.groups ?? [] };
  const user = db.users.get(s.name);
  return user && sameSecret(userFingerprint(user), s.fingerprint) ? { kind: 'user', user } : undefined;
}

/** The Admin login, if `user` and `password` are it; both compared every time, so a wrong name costs the same. */
export function isAdminLogin(admin: AdminCredentials, user: string, password: string): boolean {
  const userOk = sameSecret(user, admin.username);
  const passwordOk = sameSecret(password, admin.password);
  return userOk && passwordOk;
}

/** A Bearer token: the API key of the users file it is, or 401. */
export function keyAccess(token: string, db: UsersDb): { ok: true; principal: Principal } | Refused {
  const key = findApiKey(token, db);
  return key
    ? { ok: true, principal: { kind: 'key', key } }
    : { ok: false, status: 401, error: 'unknown, revoked or expired key' };
}

/** Basic `<user>:<password>` of a user of the users file; never for a user with a one-time code (TOTP_BASIC_REFUSED). */
export async function passwordAccess(
  user: string,
  password: string,
  db: UsersDb,
): Promise<{ ok: true; principal: Principal } | Refused> {
  if (db.users.get(user)?.totp !== undefined) return { ok: false, status: 401, error: TOTP_BASIC_REFUSED };
  const found = await findUser(user, password, db);
  if (found === 'busy') return { ok: false, status: 503, error: 'too many password checks at once; retry in a moment' };
  if (!found) return { ok: false, status: 401, error: 'wrong user name or password' };
  return { ok: true, principal: { kind: 'user', user: found } };
}

const NOT_BASE64 = 'malformed Authorization header: not base64 of user:password';
export const MALFORMED: Refused = { ok: false, status: 400, error: NOT_BASE64 };

/**
 * The admin routes' rule once the users file holds accounts: a Bearer key, Basic of a user or of the Admin login, a
 * user a trusted proxy vouches for, or the session cookie. An Authorization header, when sent, decides alone.
 */
export async function decideAccountAccess(
  c: Context,
  db: UsersDb,
  admin: AdminCredentials | undefined,
  sessions: SessionStore | undefined,
  trustedHeaders?: TrustedHeaders,
): Promise<{ ok: true; principal: Principal; session?: string } | Refused> {
  const header = c.req.header('authorization');
  const bearer = parseBearer(header);
  if (bearer !== undefined) return keyAccess(bearer, db);
  const creds = parseBasicAuth(header);
  if (creds.kind === 'malformed') return MALFORMED;
  if (creds.kind === 'ok') {
    if (admin && isAdminLogin(admin, creds.user, creds.password))
      return { ok: true, principal: { kind: 'admin', name: admin.username } };
    return passwordAccess(creds.user, creds.password, db);
  }
  const vouched = vouchedFor(c, trustedHeaders);
  if (vouched) return { ok: true, principal: vouched };
  const id = getCookie(c, SESSION_COOKIE);
  if (id !== undefined && id !== '') {
    const session = sessions?.find(id);
    const principal = session && sessionPrincipal(session, db, admin);
    if (principal) return { ok: true, principal, session: id };
    sessions?.end(id);
    const error = 'the session has ended (logged out, expired or changed); log in again at /login';
    return { ok: false, status: 401, error };
  }
  return { ok: false, status: 401, error: 'log in at /login, or send Basic <user>:<password> or a Bearer key' };
}
