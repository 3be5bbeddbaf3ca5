import mitt, { type Emitter } from 'mitt';
import type {
  AlertKind,
  LaunchBlockKind,
  MaintenanceKind,
  MaintenanceOutcome,
  RestartReason,
} from '../machines/instance.types.ts';
import type { DiskReading } from './disk-reading.ts';

export type { DiskReading } from './disk-reading.ts';
// The machine's own words for why a server was relaunched and what deserves attention, defined there once.
export type { AlertKind, MaintenanceKind, RestartReason };

/**
 * What a chat notification is about (`Notification.Routes[].Events`); `loop` covers crash and hang loops,
 * `scheduled-restart` and `hold` are the notifier's from the maintenance events (src/notify/notices.ts).
 */
export const NOTICE_KINDS = [
  'crash',
  'hang',
  'loop',
  'failing',
  'stopped',
  'update-installed',
  'update-failed',
  'scheduled-restart',
  'hold',
  'disk',
  // A launch blocked by the daemon's resources or a held game port: once per episode, and its end.
  'launch-blocked',
  // Update checks failing for Timing.UpdateCheckAlertMinutes, and working again.
  'update-check',
  // A snapshot of an instance's data that failed, or its off-host copy (Backups.AfterCommand) that failed.
  'backup',
  // A server missing from a hub it advertises to for longer than Hub.MissingMinutes, and listed again.
  'hub',
] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/**
 * A notification for people, as the chat routes take it (src/notify/). Alerts, updates and maintenance events are
 * turned into notices by the notifier itself; `instance:notice` carries one from anywhere else.
 */
export interface Notice {
  /** The instance; '' for a notice about the daemon's host (disk space), which every route wanting its kind gets. */
  key: string;
  kind: NoticeKind;
  /** The whole story in one line: a Text message's content, an Embed's description. Names the key in backticks. */
  message: string;
  /** The embed title's words (`Scheduled restart pending`), the instance after them; by default the kind's. */
  title?: string;
  /** Why, in a few words: who stopped it, a hold's reason, a failed update's error, the policy a restart waits on. */
  reason?: string;
  exit?: { code: number | null; signal: string | null } | null;
  revision?: string | null;
  /** How long the server had been running, where known. */
  uptimeMs?: number;
  /** More embed fields (a deadline, a hold's end); Text shows only `message`. */
  fields?: Array<{ name: string; value: string }>;
  at: number;
}

export type UpdatePhase = 'check' | 'download' | 'verify' | 'extract' | 'install' | 'done' | 'none' | 'failed';

/**
 * Domain facts. Producers emit, and loggers, the notifier, metrics, the audit log and the dashboard subscribe.
 * Handlers must not throw: mitt calls them synchronously inside the producer. One naming scheme: `instance:<fact>`
 * for a fact about one instance (it carries its `key`), `daemon:<fact>` for the daemon's own.
 */
export type BusEvents = {
  'instance:state': { key: string; state: string; previous: string | null; at: number };
  'instance:launch': { key: string; pid: number; launchId: number; revision: string | null; at: number };
  'instance:checkin': { key: string; launchId: number; at: number };
  'instance:restart': { key: string; reason: RestartReason; at: number };
  /** `level` `info` for what a person asked for (an operator's stop); `alert` (or absent) for what deserves attention. */
  'instance:alert': {
    key: string;
    kind: AlertKind;
    level?: 'alert' | 'info';
    message: string;
    /** The exit that caused it (crash, failing, stopped), when known. */
    exit?: { code: number | null; signal: string | null } | null;
    at: number;
  };
  /** Something people are told in chat (see Notice); src/notify/ routes it by kind and instance. */
  'instance:notice': Notice;
  'instance:update': {
    key: string;
    phase: UpdatePhase;
    revision?: string | null;
    bytes?: number;
    total?: number | null;
    durationMs?: number;
    error?: string;
    /** With `failed`: whether the check itself failed (a CDN down) or a found build could not be installed. */
    during?: 'check' | 'install';
    /** With `done` and `failed`: who asked for the build (`by ops from 10.0.0.5`), when someone did. */
    by?: string;
    at: number;
  };
  /**
   * Maintenance, once when it begins and once when it is done, never per poll: `when` is the policy, `until` a
   * hold's end (ms), `by` who asked for a requested restart.
   */
  'instance:maintenance-pending': {
    key: string;
    kind: MaintenanceKind;
    when?: string;
    deadline?: number | null;
    reason?: string;
    by?: string;
    until?: number;
    at: number;
  };
  /** `how`: done (the server went), forced (MaxDelayMinutes ran out), released, expired (a hold), or dropped. */
  'instance:maintenance-done': {
    key: string;
    kind: MaintenanceKind;
    how: MaintenanceOutcome;
    at: number;
  };
  'instance:log': { key: string; stream: 'stdout' | 'stderr'; line: string; at: number };
  /** Every file system the daemon watches, at every check (`Disk.CheckSeconds`). */
  'daemon:disk-checked': { filesystems: DiskReading[]; at: number };
  /** A watched file system went below its threshold: once, until it is back above it. */
  'daemon:disk-low': DiskReading & { at: number };
  /** A file system that was low is back above its threshold (with a little to spare, so it does not flap). */
  'daemon:disk-recovered': DiskReading & { at: number };
  /**
   * Processes a launch left behind that process tracking killed (its cgroup, or its environment marker): when its
   * server exited, or before the next launch (from an earlier launch or daemon, or holding the game port).
   */
  'instance:stragglers': { key: string; pids: number[]; when: 'exit' | 'relaunch'; at: number };
  /** An update check ended: found an update or none (`ok`), or failed with `error` (src/supervisor/update-check-record.ts). */
  'instance:update-check': { key: string; ok: boolean; available: boolean; error: string | null; at: number };
  /**
   * A snapshot of the instance's data was taken (`ok`) or failed (`reason` space: the disk; failed: anything else);
   * `removed`: the snapshots retention deleted after it.
   */
  'instance:backup': {
    key: string;
    ok: boolean;
    kind: string;
    id: string | null;
    bytes: number | null;
    archiveBytes: number | null;
    error: string | null;
    removed: string[];
    at: number;
  };
  /** At daemon start, the newest snapshot on disk, taken under an earlier daemon: the last success until the next. */
  'instance:backup-found': { key: string; id: string; archiveBytes: number; at: number };
  /** `Backups.AfterCommand` ended for a snapshot: its status (`exit code 0`, …) and the end of its output. */
  'instance:backup-copied': { key: string; id: string; ok: boolean; status: string; output: string; at: number };
  /** A launch not the server's fault to fail (`resources`, `port`), retried in `retryMs`; `attempts` 1 begins one. */
  'instance:launch-blocked': {
    key: string;
    kind: LaunchBlockKind;
    message: string;
    attempts: number;
    retryMs: number;
    at: number;
  };
  /** A launch spawned again after `attempts` blocked ones: the episode is over. */
  'instance:launch-unblocked': { key: string; kind: LaunchBlockKind; attempts: number; at: number };
  'instance:checkin-rejected': { key: string; reason: string; remote: string | undefined; at: number };
  /**
   * A control request whose credentials were accepted (`/instances/:key/<verb>` or the dashboard's
   * `/api/instances/:key/<verb>`), taken or refused; the audit log writes each.
   */
  'instance:control': {
    key: string;
    action: string;
    user: string | undefined;
    remote: string | undefined;
    status: number;
    result: 'accepted' | 'refused';
    /** Why it was refused, when the daemon said (409: no update provider, no previous build, …). */
    reason?: string;
    /** A console request (action `console`): the command line sent or refused; null when the body had none. */
    command?: string | null;
    /** A download (action `download`): the file's path under the instance folder. */
    file?: string;
    at: number;
  };
  // --- The daemon's own environment: write failures, refused requests, escaped errors ---
  /**
   * A server's log could not be written (`code`: ENOSPC, ENOENT, EACCES, …): its lines are dropped from now on and
   * counted, and the writer tries again every `Timing.LogRetrySeconds`. Once per outage, not per line.
   */
  'instance:log-failing': { key: string; file: string; code: string; message: string; at: number };
  /** Lines of a server's log that were not written (the count of this one report). */
  'instance:log-dropped': { key: string; lines: number; at: number };
  /** A server's log is written again after an outage; `dropped` lines were lost meanwhile. */
  'instance:log-resumed': { key: string; file: string; dropped: number; at: number };
  /**
   * A request refused before its credentials were accepted (wrong user, unknown key, junk or missing credentials),
   * on the control, status, log and admin routes. A stranger chooses how many: subscribers rate-limit by `remote`.
   * `route` is one of a fixed few, so it may be a metric label; `key` and `user` are what the client sent (shown).
   */
  'daemon:request-refused': {
    route: RefusedRoute;
    action: string;
    key: string | undefined;
    user: string | undefined;
    remote: string | undefined;
    status: number;
    reason: string;
    /** A 403 for want of a right: the permission can() refused (one of src/auth/permissions.ts). */
    permission?: string;
    at: number;
  };
  /**
   * A dashboard login (`POST /login`) and how it ended; `user` is the name the form gave (shown). The audit log
   * writes each, the failed ones rate-limited by source like any refusal; metrics count them by `result`.
   */
  'daemon:login': { user: string; result: LoginResult; remote: string | undefined; at: number };
  /**
   * A user created, given roles or removed, or a key made for `watchdog login`, over HTTP (user-routes.ts): `by` is
   * who did it (the audit line's `user`), `name` whom it changed, `roles` as written, `keyId` the key made.
   */
  'daemon:user-changed': {
    action: 'user.create' | 'user.roles' | 'user.remove' | 'key.create';
    by: string | undefined;
    name: string;
    roles?: string[];
    keyId?: string;
    remote: string | undefined;
    at: number;
  };
  /** A dashboard session ended: its user logged out (`logout`). */
  'daemon:logout': { user: string; remote: string | undefined; at: number };
  /** An error no code path caught (`uncaughtException`, `unhandledRejection`); the daemon goes on supervising. */
  'daemon:fault': { kind: 'uncaught-exception' | 'unhandled-rejection'; message: string; at: number };
};

/**
 * How a login ended: `ok`; `wrong_password` (or no such user: the form does not say which); `wrong_code` (the
 * password was right but the one-time code missing, wrong or used before; the form says no more than for a wrong
 * password); `limited` (its source tried too often); `locked` (its account is locked for now); `busy` (too many
 * password checks at once). Single sign-on (`/login/oidc`) adds `refused` (a bad or replayed state, the provider's
 * refusal, no user claim) and `unavailable` (the provider could not be reached).
 */
export const LOGIN_RESULTS = [
  'ok',
  'wrong_password',
  'wrong_code',
  'limited',
  'locked',
  'busy',
  'refused',
  'unavailable',
] as const;
export type LoginResult = (typeof LOGIN_RESULTS)[number];

/** The routes a refused request is counted under; fixed, so a stranger cannot add label values. */
export const REFUSED_ROUTES = ['control', 'status', 'logs', 'admin', 'cross-site'] as const;
export type RefusedRoute = (typeof REFUSED_ROUTES)[number];

export type Bus = Emitter<BusEvents>;

export function createBus(): Bus {
  return mitt<BusEvents>();
}

/** Handlers by event name, as `subscribe` takes them. */
export type BusHandlers = { [K in keyof BusEvents]?: (event: BusEvents[K]) => void };

/**
 * Subscribes each handler to its event; the function returned unsubscribes them all, so a subscriber lists its
 * events once.
 */
export function subscribe(bus: Bus, handlers: BusHandlers): () => void {
  // Each entry pairs a name with its own handler type, which the list form cannot say.
  const entries = Object.entries(handlers) as Array<[keyof BusEvents, (event: BusEvents[keyof BusEvents]) => void]>;
  for (const [type, handler] of entries) bus.on(type, handler);
  return () => {
    for (const [type, handler] of entries) bus.off(type, handler);
  };
}
