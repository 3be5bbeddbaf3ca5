import type { InspectionEvent } from 'xstate';
import type { Bus } from '../bus.ts';
import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import type { Logger } from '../log.ts';
import type { ProcessTracking } from '../process/tracking.ts';
import type { LaunchData, MaintenanceData, StopData } from '../store/instance-data.ts';
import type { UpdateProvider } from '../updates/provider.ts';
import type { StatusExtras } from './status.ts';

/**
 * What an instance is made of: its settings and the daemon's I/O. A config reload replaces `config`, `instance` and
 * `provider` in place, so the process host and the update actors, which hold this object, read the new ones. The
 * `record*` writes never reject: the data writer (`createDataWriter` in instance-start.ts) logs a failed write and retries it.
 */
export interface InstanceDeps {
  config: ResolvedConfig;
  instance: ResolvedInstance;
  bus: Bus;
  log: Logger;
  baseUrl: string;
  provider: UpdateProvider | null;
  /** The revision installed at start; from then on the machine's context holds it. */
  revision: string | null;
  recordRevision: (revision: string) => Promise<void>;
  /** Records a launch (and clears the spawning record), or that none runs. */
  recordLaunch: (launch: LaunchData | null) => Promise<void>;
  /**
   * Records a launch about to be spawned, before its pid exists, so a daemon killed before `recordLaunch` leaves
   * its server findable by the next one (by its secret). Optional: test doubles may leave it out.
   */
  recordSpawning?: (spawning: Omit<LaunchData, 'pid' | 'startTime'>) => Promise<void>;
  /** Swaps bin.prev back into bin and the revisions in data.json; returns the revision now installed (the `rollback` actor). */
  rollback: () => Promise<string | null>;
  /** The revision bin.prev holds (data.json's previousRevision); optional: test doubles may leave it out. */
  previousRevision?: () => string | null;
  /** The maintenance plan data.json kept (pending action, hold); optional: test doubles may leave it out. */
  savedMaintenance?: MaintenanceData | null;
  recordMaintenance?: (plan: MaintenanceData) => Promise<void>;
  /** An operator's stop that data.json kept: the instance stays stopped at start. Optional in test doubles. */
  savedStop?: StopData | null;
  recordStop?: (stop: StopData | null) => Promise<void>;
  /** The launch record of a verified server left by the previous daemon (for ADOPT). */
  adoptable: () => LaunchData | null;
  /** How the processes of a launch are found and ended (`src/process/tracking.ts`); optional: test doubles may leave it out. */
  tracking?: ProcessTracking;
  /** What the daemon adds at the end of the status, read each time it is asked for (absent: nothing). */
  statusExtras?: (key: string) => StatusExtras;
  /** `watchdog start --inspect`: the Stately inspector's observer of the instance actor (src/daemon/inspector.ts). */
  inspect?: (event: InspectionEvent) => void;
}
