import { createHash, randomBytes } from 'node:crypto';
import { setCapped } from '../capped-map.ts';
import { monotonicMs } from '../clock.ts';

/** Whom a session speaks for: a user of the users file, the `Admin` login, or a user an OIDC provider vouched for. */
export interface SessionOwner {
  kind: 'user' | 'admin' | 'sso';
  name: string;
  /** A digest of the login (hash and TOTP secret, Admin's password; `sso`: provider and client): a change ends it. */
  fingerprint: string;
  /** `sso`: the groups the provider named at login. */
  groups?: readonly string[];
}

export interface Session extends SessionOwner {
  createdAt: number;
  lastSeenAt: number;
}

export type SessionStore = ReturnType<typeof createSessionStore>;

/** `Users.SessionMinutes` 720, `SessionIdleMinutes` 60 and `MaxSessions` 1000 (the schema's defaults), in ms. */
export const DEFAULT_SESSIONS = { absoluteMs: 720 * 60_000, idleMs: 60 * 60_000, max: 1000 };
export type SessionSettings = typeof DEFAULT_SESSIONS;

const ID_BYTES = 32;

/** SHA-256 in base64: sessions are kept under their id's, logins remembered by their fingerprint's. */
export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');

/** Only what `create` makes (43 base64url characters) is looked up. */
const ID_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/**
 * Sessions in memory (a restart logs everyone out), at most `max`, oldest ended first. `now` is monotonic ms;
 * settings are read at each use, so a reload applies to live sessions.
 */
export function createSessionStore(settings: () => SessionSettings, now: () => number = monotonicMs) {
  // Insertion order is creation order: the first entry is the oldest. Keyed by the id's SHA-256: a heap dump holds
  // no usable id, and a lookup's timing says nothing of the id.
  const sessions = new Map<string, Session>();
  const expired = (s: Session, t: number, set: SessionSettings) =>
    t - s.createdAt >= set.absoluteMs || t - s.lastSeenAt >= set.idleMs;
  return {
    /** A new session: its id, sent once as the cookie and never kept in the clear. */
    create(owner: SessionOwner): string {
      const id = randomBytes(ID_BYTES).toString('base64url');
      const t = now();
      setCapped(sessions, sha256(id), { ...owner, createdAt: t, lastSeenAt: t }, Math.max(1, settings().max));
      return id;
    },
    /** The session in force (its idle timer starts over); an expired one is ended here. */
    find(id: string): Session | undefined {
      if (!ID_FORMAT.test(id)) return undefined;
      const key = sha256(id);
      const s = sessions.get(key);
      if (!s) return undefined;
      const t = now();
      if (expired(s, t, settings())) {
        sessions.delete(key);
        return undefined;
      }
      s.lastSeenAt = t;
      return s;
    },
    /** As find, without counting as a use (an open event stream asks). */
    peek(id: string): Session | undefined {
      const s = ID_FORMAT.test(id) ? sessions.get(sha256(id)) : undefined;
      return s !== undefined && !expired(s, now(), settings()) ? s : undefined;
    },
    end(id: string): boolean {
      return ID_FORMAT.test(id) && sessions.delete(sha256(id));
    },
    /** Ends every session `stale` says is no longer its owner's (removed, password changed); how many. */
    endWhere(stale: (s: Session) => boolean): number {
      const ended = [...sessions].filter(([, s]) => stale(s));
      for (const [key] of ended) sessions.delete(key);
      return ended.length;
    },
    size: () => sessions.size,
  };
}
