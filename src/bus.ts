import mitt, { type Emitter } from 'mitt';
import type { AlertKind, RestartReason } from '../machines/instance.types.ts';

// The machine's own words for why a server was relaunched and what deserves attention, defined there once.
export type { AlertKind, RestartReason };

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
  'instance:alert': { key: string; kind: AlertKind; level?: 'alert' | 'info'; message: string; at: number };
  'instance:update': {
    key: string;
    phase: UpdatePhase;
    revision?: string | null;
    bytes?: number;
    total?: number | null;
    durationMs?: number;
    error?: string;
    at: number;
  };
  'instance:log': { key: string; stream: 'stdout' | 'stderr'; line: string; at: number };
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
