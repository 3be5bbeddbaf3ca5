import mitt, { type Emitter } from 'mitt';
import type { AlertKind, RestartReason } from '../machines/instance.types.ts';

// The machine's own words for why a server was relaunched and what deserves attention, defined there once.
export type { AlertKind, RestartReason };

/**
 * What a chat notification is about; `Notification.Routes[].Events` names these. `loop` covers crash and hang loops;
 * `scheduled-restart` and `hold` come from maintenance's `maintenance:pending`/`maintenance:done`, which the notifier
 * turns into notices (src/notify/maintenance-notices.ts).
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
  // A launch blocked by the daemon's resources or a held game port (issue 23): once per episode, and its end.
  'launch-blocked',
] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/**
 * A notification for people, as the chat routes take it (src/notify/). Alerts, updates and maintenance events are
 * turned into notices by the notifier itself; `instance:notice` carries one from anywhere else.
 */
export interface Notice {
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

export type MaintenanceKind = 'scheduled-restart' | 'restart' | 'update' | 'hold';

export type UpdatePhase = 'check' | 'download' | 'verify' | 'extract' | 'install' | 'done' | 'none' | 'failed';

/**
 * Domain facts. Producers emit, and loggers, the notifier, metrics, the audit log and the dashboard subscribe.
 * Handlers must not throw: mitt calls them synchronously inside the producer.
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
    at: number;
  };
  /**
   * Maintenance (issue 13), once when it begins and once when it is done, never per poll. `kind`: a restart from
   * `RestartSchedule` (`scheduled-restart`), one asked for with `?when=` (`restart`), a found update waiting for its
   * moment (`update`), or a `hold`. `when` is the policy (Now, RoundEnd, Empty); `until` a hold's end (ms).
   */
  'maintenance:pending': {
    key: string;
    kind: MaintenanceKind;
    when?: string;
    deadline?: number | null;
    reason?: string;
    until?: number;
    at: number;
  };
  /** `how`: done (the server went), forced (MaxDelayMinutes ran out), released, expired (a hold), or dropped. */
  'maintenance:done': {
    key: string;
    kind: MaintenanceKind;
    how: 'done' | 'forced' | 'released' | 'expired' | 'dropped';
    at: number;
  };
  'instance:log': { key: string; stream: 'stdout' | 'stderr'; line: string; at: number };
  /**
   * A launch could not happen for a reason that is not the server's fault (`resources`: the daemon is out of
   * descriptors or memory; `port`: the game port is still held) and is retried in `retryMs`. `attempts` counts the
   * episode: 1 begins one. Never a startup failure.
   */
  'instance:launch-blocked': {
    key: string;
    kind: 'resources' | 'port';
    message: string;
    attempts: number;
    retryMs: number;
    at: number;
  };
  /** A launch spawned again after `attempts` blocked ones: the episode is over. */
  'instance:launch-unblocked': { key: string; kind: 'resources' | 'port'; attempts: number; at: number };
  'checkin:rejected': { key: string; reason: string; remote: string | undefined; at: number };
  control: {
    key: string;
    action: string;
    user: string | undefined;
    remote: string | undefined;
    status: number;
    result: 'accepted' | 'refused';
    /** Why it was refused, when the daemon said (409: no update provider, no previous build, …). */
    reason?: string;
    at: number;
  };
};

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
