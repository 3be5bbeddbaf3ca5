import type { Context } from 'hono';
import type { InstanceControl, InstanceRegistry } from '../supervisor/contract.ts';
import { parseBasicAuth, secretsEqual, WWW_AUTHENTICATE } from './basic-auth.ts';

/** Which secret the password must match: the configured ApiToken (control, status) or the launch's check-in secret. */
export type Credential = 'apiToken' | 'checkinSecret';

export type AuthStatus = 400 | 401 | 403 | 404 | 503;

export type AuthResult =
  | { ok: true; user: string; instance: InstanceControl }
  | { ok: false; status: AuthStatus; user: string | undefined; reason: string };

/**
 * The decision order README.md documents ("HTTP API"), exactly: no/non-Basic header → 401; bad base64 or no
 * colon → 400; user ≠ key → 403 (the real watchdog's `Forbid()` has no auth scheme to answer it and ends in 500);
 * unknown instance → 404 (503 while a configured one is still being started); wrong password → 401. A missing header on ping is 401 too, not the real watchdog's 400
 * (a model-validation error there). Reasons never contain the password.
 */
export function authorize(
  header: string | undefined,
  key: string,
  registry: InstanceRegistry,
  credential: Credential,
): AuthResult {
  const creds = parseBasicAuth(header);
  if (creds.kind === 'missing') {
    return { ok: false, status: 401, user: undefined, reason: 'malformed header: missing or not Basic' };
  }
  if (creds.kind === 'malformed') {
    return { ok: false, status: 400, user: undefined, reason: 'malformed header: not base64 of user:password' };
  }
  const { user, password } = creds;
  if (user !== key) return { ok: false, status: 403, user, reason: 'user does not match the instance key' };
  const instance = registry.get(key);
  if (!instance) {
    if (registry.starting?.(key))
      return { ok: false, status: 503, user, reason: 'instance still starting; retry in a moment' };
    return { ok: false, status: 404, user, reason: 'unknown instance' };
  }

  const expected = credential === 'apiToken' ? instance.apiToken() : instance.checkinSecret();
  if (expected === undefined) {
    const reason = credential === 'apiToken' ? 'instance has no ApiToken' : 'no server running';
    return { ok: false, status: 401, user, reason };
  }
  if (!secretsEqual(password, expected)) {
    const reason = credential === 'apiToken' ? 'wrong token' : 'stale or wrong token';
    return { ok: false, status: 401, user, reason };
  }
  return { ok: true, user, instance };
}

/** The response for a refused request; a 401 always carries the Basic challenge. */
export function refusal(c: Context, status: AuthStatus, reason: string): Response {
  if (status === 401) c.header('WWW-Authenticate', WWW_AUTHENTICATE);
  if (status === 503) c.header('Retry-After', '1');
  return c.json({ error: reason }, status);
}
