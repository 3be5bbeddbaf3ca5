import type { BusEvents } from '../bus.ts';
import type { ResolvedInstance } from '../config/resolved.ts';
import type { Logger } from '../log.ts';

export type UpdateProgress = Pick<BusEvents['instance:update'], 'phase' | 'bytes' | 'total'>;

/** What a provider gets from the daemon. */
export interface ProviderContext {
  instance: ResolvedInstance;
  /** `BaseUrl` of the watchdog as clients reach it (ends with `/`); Local and non-hybrid Git build client URLs from it. */
  publicBaseUrl: string;
  log: Logger;
  progress: (p: UpdateProgress) => void;
}

export interface UpdateCheck {
  available: boolean;
  /** The revision that would be installed, when the provider knows it without installing. */
  revision?: string;
}

/**
 * An update source. The statechart runs `check` then `apply` (the `update` actor) before a launch, and `check`
 * alone on `UPDATE_CHECK`. Both honour `signal`. `apply` installs atomically: on any failure it throws an
 * UpdateError and leaves `bin/` exactly as it was.
 */
export interface UpdateProvider {
  readonly type: string;
  check(current: string | null, signal: AbortSignal): Promise<UpdateCheck>;
  /** Installs the newest build and returns its revision. */
  apply(current: string | null, signal: AbortSignal): Promise<string>;
  /**
   * The revision of a found build already downloaded and made ready (staged) by `check`, waiting for `apply` to swap
   * it in, or null. Providers that do all their work in `apply` leave it out.
   */
  staged?(): string | null;
  /** `--cvar name=value` pairs appended to the launch arguments when a revision is installed (Local adds build.*). */
  launchCvars?(revision: string | null): Promise<Array<[string, string]>>;
}
