import { createHash, randomBytes } from 'node:crypto';
import { monotonicMs } from '../clock.ts';

/** `Users.SessionMinutes`, `Users.SessionIdleMinutes` and `Users.MaxSessions`, in ms and a count. */
export interface SessionSettings {
  /** A session ends this long after the login, however busy. */
  absoluteMs: number;
  /** …and this long after its last request. */
  idleMs: number;
  /** Sessions kept at once; a login past it ends the oldest. */
  max: number;
}

/**
 * Whom a session speaks for: a user of the users file, the `Admin` login of appsettings.yml, or a user an OpenID
 * Connect provider vouched for (`sso`, in `groups`).
 */
export interface SessionOwner {
  kind: 'user' | 'admin' | 'sso';
  name: string;
  /**
   * What the owner's login was (a digest of the user's stored hash and TOTP secret, or of Admin's password): a new
   * password or a one-time code turned on or off ends the session, and so does the owner's removal. For `sso`, the provider and client it came through.
   */
  fingerprint: string;
  /** `sso`: the groups the provider named at login. */
  groups?: readonly string[];
}

export interface Session extends SessionOwner {
  createdAt: number;
  lastSeenAt: number;
}

export interface SessionStore {
  /** A new session for `owner`: its id, to be sent once as the cookie and never kept in the clear. */
  create(owner: SessionOwner): string;
  /** The session `id` names, if it is in force (its idle timer starts over); an expired one is ended here. */
  find(id: string): Session | undefined;
  /** The session `id` names if it is in force, without counting this as its use (an open event stream asks). */
  peek(id: string): Session | undefined;
  /** Ends the session `id` names; whether there was one. */
  end(id: string): boolean;
  /** Ends every session `stale` says is no longer its owner's (removed, password changed); how many. */
  endWhere(stale: (s: Session) => boolean): number;
  size(): number;
}

/** `Users.SessionMinutes` 720, `SessionIdleMinutes` 60, `MaxSessions` 1000: the defaults of the schema. */
export const DEFAULT_SESSIONS: SessionSettings = { absoluteMs: 720 * 60_000, idleMs: 60 * 60_000, max: 1000 };

const ID_BYTES = 32;

/**
 * Kept under the SHA-256 of the id, so a heap dump or a log of the map holds nothing a browser could send back;
 * a lookup by that digest tells a timing observer nothing about the id (it cannot aim at a digest's prefix).
 */
const digest = (id: string) => createHash('sha256').update(id, 'utf8').digest('base64');

/** Only what `create` makes: 43 base64url characters. Anything else is not looked up. */
const ID_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/**
 * Sessions in memory (a daemon restart logs everyone out), at most `max`, oldest ended first. `now` is a monotonic
 * clock in ms (tests pass a simulated one); settings are read at each use, so a reload applies to live sessions.
 */
export function createSessionStore(settings: () => SessionSettings, now: () => number = monotonicMs): SessionStore {
  // Insertion order is creation order: the first entry is the oldest.
  const sessions = new Map<string, Session>();
  const expired = (s: Session, t: number, set: SessionSettings) =>
    t - s.createdAt >= set.absoluteMs || t - s.lastSeenAt >= set.idleMs;
  return {
    create(owner) {
      const id = randomBytes(ID_BYTES).toString('base64url');
      const set = settings();
      while (sessions.size >= Math.max(1, set.max)) {
        const oldest = sessions.keys().next().value;
        if (oldest === undefined) break;
        sessions.delete(oldest);
      }
      const t = now();
      sessions.set(digest(id), { ...owner, createdAt: t, lastSeenAt: t });
      return id;
    },
    find(id) {
      if (!ID_FORMAT.test(id)) return undefined;
      const key = digest(id);
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
    peek(id) {
      const s = ID_FORMAT.test(id) ? sessions.get(digest(id)) : undefined;
      return s !== undefined && !expired(s, now(), settings()) ? s : undefined;
    },
    end(id) {
      return ID_FORMAT.test(id) && sessions.delete(digest(id));
    },
    endWhere(stale) {
      let n = 0;
      for (const [key, s] of sessions)
        if (stale(s)) {
          sessions.delete(key);
          n++;
        }
      return n;
    },
    size: () => sessions.size,
  };
}
