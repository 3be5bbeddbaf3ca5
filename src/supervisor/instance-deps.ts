import type { InspectionEvent } from 'xstate';
import type { Bus } from '../bus.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import type { Logger } from '../log.ts';
import type { ProcessTracking } from '../process/tracking.ts';
import type { LaunchData, MaintenanceData, StopData } from '../store/instance-data.ts';
import type { UpdateProvider } from '../updates/provider.ts';
import type { StatusExtras } from './status.ts';

/**
 * An instance's settings and the daemon's I/O (tests may leave out the optional parts). A reload replaces `config`,
 * `instance` and `provider` in place. The `record*` writes never reject (`createDataWriter` retries).
 */
export interface InstanceDeps {
  config: ResolvedConfig;
  instance: ResolvedInstance;
  bus: Bus;
  log: Logger;
  /** Where servers check in: an address this daemon listens on. */
  baseUrl: string;
  provider: UpdateProvider | null;
  /** The revision installed at start; from then on the machine's context holds it. */
  revision: string | null;
  recordRevision: (revision: string) => Promise<void>;
  recordLaunch: (launch: LaunchData | null) => Promise<void>;
  /** Records a launch before its spawn, so a daemon killed before `recordLaunch` leaves it findable. */
  recordSpawning?: (spawning: Omit<LaunchData, 'pid' | 'startTime'>) => Promise<void>;
  /** Swaps bin.prev back into bin; the revision now installed. */
  rollback: () => Promise<string | null>;
  previousRevision?: () => string | null;
  savedMaintenance?: MaintenanceData | null;
  recordMaintenance?: (plan: MaintenanceData) => Promise<void>;
  savedStop?: StopData | null;
  recordStop?: (stop: StopData | null) => Promise<void>;
  /** The launch record of a verified server left by the previous daemon (for ADOPT). */
  adoptable: () => LaunchData | null;
  /** Without it only process groups are killed. */
  tracking?: ProcessTracking;
  statusExtras?: (key: string) => StatusExtras;
  /** `watchdog start --inspect`. */
  inspect?: (event: InspectionEvent) => void;
}
