/** Binds an instance's maintenance runner to its machine, its server's API and its data.json. */

import { requestUpdate } from '../process/server-api.ts';
import { readPlayers } from '../process/server-status.ts';
import type { MaintenanceData } from '../store/instance-data.ts';
import type { InstanceDeps } from './instance-deps.ts';
import { Maintenance } from './maintenance.ts';
import type { MaintenancePlan } from './maintenance-plan.ts';
import type { Clock } from './maintenance-types.ts';

/** What the runner reads of the instance's statechart. */
export interface MachineAccess {
  /** The server is wanted and running (starting, running or awaiting a check-in). */
  live(): boolean;
  secret(): string | null;
  send(event: { type: 'RESTART' } | { type: 'UPDATE_CHECK' }): void;
}

/** Answers from a server's API are given this long: a busy game loop may take a moment. */
const REQUEST_MS = 5000;

export function createMaintenance(deps: InstanceDeps, machine: MachineAccess, clock?: Clock): Maintenance {
  const apiPort = () => deps.instance.settings.ApiPort;
  return new Maintenance({
    key: deps.instance.key,
    log: deps.log.child('maintenance'),
    bus: deps.bus,
    settings: () => deps.instance.settings.Maintenance,
    pollMs: () => deps.config.timing.MaintenancePollSeconds * 1000,
    canCheck: () => deps.provider !== null,
    serverLive: () => machine.live(),
    players: () => readPlayers(apiPort(), Math.min(REQUEST_MS, deps.config.timing.MaintenancePollSeconds * 1000)),
    askLeave: async () => {
      const secret = machine.secret();
      return secret !== null && (await requestUpdate(apiPort(), secret, REQUEST_MS));
    },
    restart: () => machine.send({ type: 'RESTART' }),
    checkUpdate: () => {
      if (deps.provider !== null) machine.send({ type: 'UPDATE_CHECK' });
    },
    staged: () => deps.provider?.staged?.() ?? null,
    save: (plan: MaintenancePlan) => deps.recordMaintenance?.(plan as MaintenanceData) ?? Promise.resolve(),
    clock,
  });
}
