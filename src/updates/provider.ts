import type { BusEvents } from '../bus.ts';
import type { ResolvedInstance } from '../config/resolved.ts';
import type { Logger } from '../log.ts';

export type UpdateProgress = Pick<BusEvents['instance:update'], 'phase' | 'bytes' | 'total'>;

export interface ProviderContext {
  instance: ResolvedInstance;
  /** The watchdog's `BaseUrl` as clients reach it (ends with `/`), for client zip URLs. */
  publicBaseUrl: string;
  log: Logger;
  progress: (p: UpdateProgress) => void;
}

/**
 * An update source: `check` on `UPDATE_CHECK`, `check` then `apply` before a launch. `apply` installs atomically,
 * returning the revision; on any failure it throws an UpdateError and leaves `bin/` as it was.
 */
export interface UpdateProvider {
  readonly type: string;
  check(current: string | null, signal: AbortSignal): Promise<{ available: boolean; revision?: string }>;
  apply(current: string | null, signal: AbortSignal): Promise<string>;
  /** The revision `check` staged for `apply` to swap in, or null. */
  staged?(): string | null;
  /** `--cvar name=value` pairs for the launch (build.* of a client zip the watchdog serves). */
  launchCvars?(revision: string | null): Promise<Array<[string, string]>>;
}
