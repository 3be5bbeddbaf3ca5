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
export type { AlertKind, MaintenanceKind, RestartReason };

/** What a chat notification is about (`Notification.Routes[].Events`); `loop` covers crash and hang loops. */
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
  'launch-blocked',
  'update-check',
  'backup',
  'hub',
] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/** A notification for people; `instance:notice` carries one from anywhere but what the notifier words itself. */
export interface Notice {
  /** '' for a notice about the daemon's host (disk space), which every route wanting its kind gets. */
  key: string;
  kind: NoticeKind;
  /** The whole story in one line, the key in backticks. */
  message: string;
  /** The embed title; by default the kind's. */
  title?: string;
  reason?: string;
  exit?: { code: number | null; signal: string | null } | null;
  revision?: string | null;
  uptimeMs?: number;
  /** More embed fields; Text shows only `message`. */
  fields?: Array<{ name: string; value: string }>;
  at: number;
}

export type UpdatePhase = 'check' | 'download' | 'verify' | 'extract' | 'install' | 'done' | 'none' | 'failed';

/**
 * Domain facts: `instance:<fact>` (with its `key`) or `daemon:<fact>`. Handlers must not throw: mitt calls them
 * synchronously inside the producer.
 */
export type BusEvents = {
  'instance:state': { key: string; state: string; previous: string | null; at: number };
  'instance:launch': { key: string; pid: number; launchId: number; revision: string | null; at: number };
  'instance:checkin': { key: string; launchId: number; at: number };
  'instance:restart': { key: string; reason: RestartReason; at: number };
  /** `level` `info` for what a person asked for (an operator's stop). */
  'instance:alert': {
    key: string;
    kind: AlertKind;
    level?: 'alert' | 'info';
    message: string;
    exit?: { code: number | null; signal: string | null } | null;
    at: number;
  };
  'instance:notice': Notice;
  'instance:update': {
    key: string;
    phase: UpdatePhase;
    revision?: string | null;
    bytes?: number;
    total?: number | null;
    durationMs?: number;
    error?: string;
    /** With `failed`: the check itself failed (a CDN down), or the install of a found build. */
    during?: 'check' | 'install';
    /** With `done` and `failed`: who asked for the build (`by ops from 10.0.0.5`). */
    by?: string;
    at: number;
  };
  /** Once when it begins and once when it is done, never per poll; `until`: a hold's end. */
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
  'instance:maintenance-done': {
    key: string;
    kind: MaintenanceKind;
    how: MaintenanceOutcome;
    at: number;
  };
  'instance:log': { key: string; stream: 'stdout' | 'stderr'; line: string; at: number };
  /** Every file system the daemon watches, at every check. */
  'daemon:disk-checked': { filesystems: DiskReading[]; at: number };
  /** Once, until it is back above its threshold (with a little to spare, so it does not flap). */
  'daemon:disk-low': DiskReading & { at: number };
  'daemon:disk-recovered': DiskReading & { at: number };
  /** Processes a launch left behind, killed when its server exited or before a launch. */
  'instance:stragglers': { key: string; pids: number[]; when: 'exit' | 'relaunch'; at: number };
  'instance:update-check': { key: string; ok: boolean; available: boolean; error: string | null; at: number };
  /** A snapshot taken (`ok`) or failed; `removed`: the snapshots retention deleted after it. */
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
  /** At daemon start, the newest snapshot on disk: the last success until the next. */
  'instance:backup-found': { key: string; id: string; archiveBytes: number; at: number };
  /** `Backups.AfterCommand` ended for a snapshot: its status (`exit code 0`, …) and the end of its output. */
  'instance:backup-copied': { key: string; id: string; ok: boolean; status: string; output: string; at: number };
  /** `attempts` 1 begins an episode. */
  'instance:launch-blocked': {
    key: string;
    kind: LaunchBlockKind;
    message: string;
    attempts: number;
    retryMs: number;
    at: number;
  };
  'instance:launch-unblocked': { key: string; kind: LaunchBlockKind; attempts: number; at: number };
  'instance:checkin-rejected': { key: string; reason: string; remote: string | undefined; at: number };
  /** A control request whose credentials were accepted, taken or refused; the audit log writes each. */
  'instance:control': {
    key: string;
    action: string;
    user: string | undefined;
    remote: string | undefined;
    status: number;
    result: 'accepted' | 'refused';
    reason?: string;
    /** Action `console`: the command line; null when the body had none. */
    command?: string | null;
    /** Action `download`: the file's path under the instance folder. */
    file?: string;
    at: number;
  };
  /** A server's log could not be written: once per outage, not per line. */
  'instance:log-failing': { key: string; file: string; code: string; message: string; at: number };
  'instance:log-dropped': { key: string; lines: number; at: number };
  'instance:log-resumed': { key: string; file: string; dropped: number; at: number };
  /**
   * Refused before its credentials were accepted; a stranger chooses how many, so subscribers rate-limit by `remote`.
   * `route` is one of a fixed few (a metric label); `key` and `user` are what the client sent.
   */
  'daemon:request-refused': {
    route: RefusedRoute;
    action: string;
    key: string | undefined;
    user: string | undefined;
    remote: string | undefined;
    status: number;
    reason: string;
    /** A 403 for want of a right: the permission can() refused. */
    permission?: string;
    at: number;
  };
  /** `user` is the name the form gave; the failed ones are rate-limited by source like any refusal. */
  'daemon:login': { user: string; result: LoginResult; remote: string | undefined; at: number };
  /** `by` is who did it, `name` whom it changed. */
  'daemon:user-changed': {
    action: 'user.create' | 'user.roles' | 'user.remove' | 'key.create';
    by: string | undefined;
    name: string;
    roles?: string[];
    keyId?: string;
    remote: string | undefined;
    at: number;
  };
  'daemon:logout': { user: string; remote: string | undefined; at: number };
  /** An error no code path caught (`uncaughtException`, `unhandledRejection`); the daemon goes on supervising. */
  'daemon:fault': { kind: 'uncaught-exception' | 'unhandled-rejection'; message: string; at: number };
};

/**
 * `wrong_password` also for no such user, `wrong_code` a right password with a bad one-time code (the form tells
 * neither apart); `busy`: too many password checks at once; `refused` and `unavailable`: single sign-on's.
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

/** Fixed, so a stranger cannot add label values. */
export const REFUSED_ROUTES = ['control', 'status', 'logs', 'admin', 'cross-site'] as const;
export type RefusedRoute = (typeof REFUSED_ROUTES)[number];

export type Bus = Emitter<BusEvents>;

export const createBus = (): Bus => mitt<BusEvents>();

/** Subscribes each handler to its event; the function returned unsubscribes them all. */
export function subscribe(bus: Bus, handlers: { [K in keyof BusEvents]?: (event: BusEvents[K]) => void }): () => void {
  const entries = Object.entries(handlers) as Array<[keyof BusEvents, (event: BusEvents[keyof BusEvents]) => void]>;
  for (const [type, handler] of entries) bus.on(type, handler);
  return () => {
    for (const [type, handler] of entries) bus.off(type, handler);
  };
}
