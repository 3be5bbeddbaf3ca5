/** What the maintenance runner (maintenance.ts) needs of its instance and of time. */
import type { Bus } from '../bus.ts';
import type { MaintenanceSettings } from '../config/sections/maintenance.ts';
import type { Logger } from '../log.ts';
import type { MaintenancePlan } from './maintenance-plan.ts';

/** The timers it arms: the real ones, or a test's simulated clock (xstate's SimulatedClock fits). */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

/** What the runner needs of its instance; every effect goes through here. */
export interface MaintenanceHost {
  key: string;
  log: Logger;
  bus: Bus;
  settings(): MaintenanceSettings | undefined;
  pollMs(): number;
  /** An update provider is configured, so UpdateSchedule has something to ask. */
  canCheck(): boolean;
  /** A server is running (launched or starting), so there is something to restart. */
  serverLive(): boolean;
  /** The server's player count from its public GET /status, or null when it did not answer. */
  players(): Promise<number | null>;
  /** POST /update to the server; false when it did not take it. */
  askLeave(): Promise<boolean>;
  /** A graceful restart (POST /shutdown, the usual waits, relaunch; a pending update is installed first). */
  restart(): void;
  checkUpdate(): void;
  /** The revision of a found update the provider has downloaded and staged for its install, or null. */
  staged?(): string | null;
  save(plan: MaintenancePlan): Promise<void>;
  clock?: Clock;
}
