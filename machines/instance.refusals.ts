/**
 * Why a control request is refused: the machine decides (`snapshot.can`), the state's tags say why. Requests that
 * need something outside the machine (an update provider, a kept previous build) are refused by what is missing.
 */
import type { InstanceEvent } from './instance.types.ts';

/** The control requests a person (or a CDN) makes of an instance; `restore` puts a data snapshot back. */
export type ControlAction = 'restart' | 'update' | 'stop' | 'rollback' | 'restore';

/** The event each control action sends to the machine. */
export const CONTROL_EVENT = {
  restart: { type: 'RESTART' },
  update: { type: 'UPDATE_CHECK' },
  stop: { type: 'STOP' },
  rollback: { type: 'ROLLBACK' },
  // Which snapshot does not change whether the machine takes it.
  restore: { type: 'RESTORE', id: '' },
} as const satisfies Record<ControlAction, InstanceEvent>;

/**
 * What a tagged state is busy with, said as the reason a request it cannot take is refused. Every state that
 * refuses a request carries `busy` and one of these.
 */
export const BUSY_REASONS = {
  installing: 'an update is being installed; roll back once it is done',
  'backing-off': 'the server is between crash relaunches; stop the instance, then roll back',
  'launch-blocked': 'the launch is blocked and retried with back-off; stop the instance, then roll back',
  'rolling-back': 'a rollback is already under way',
  restoring: 'a backup is being restored',
  'shutting-down': 'the watchdog is shutting down',
} as const;

export type BusyTag = keyof typeof BUSY_REASONS;

/** What `refusalOf` reads of a machine snapshot (an xstate MachineSnapshot satisfies it). */
export interface ControlView {
  status: string;
  tags: ReadonlySet<string>;
  can(event: InstanceEvent): boolean;
}

/** What the machine cannot know: an update provider is configured, a previous build (`bin.prev`) is kept. */
export interface ControlFacts {
  canUpdate: boolean;
  canRollback: boolean;
}

/**
 * Why `action` cannot be done now, or null when the machine takes it. A stopped machine (the daemon exited) takes
 * nothing; otherwise a request is refused exactly when the machine cannot take its event.
 *
 * @example
 * refusalOf(actor.getSnapshot(), 'rollback', { canUpdate: true, canRollback: false }); // 'no previous build …'
 */
export function refusalOf(snapshot: ControlView, action: ControlAction, facts: ControlFacts): string | null {
  const busy = busyRefusal(snapshot, action);
  if (busy !== null) return busy;
  if (action === 'update' && !facts.canUpdate) return 'no update provider: UpdateType is not set for this instance';
  if (action === 'rollback' && !facts.canRollback)
    return 'no previous build to roll back to (bin.prev is missing; one is kept after each update)';
  return null;
}

/** Why the machine itself cannot take `action` now (its state is busy with something), or null. */
export function busyRefusal(snapshot: ControlView, action: ControlAction): string | null {
  if (snapshot.status !== 'active') return BUSY_REASONS['shutting-down'];
  return snapshot.can(CONTROL_EVENT[action]) ? null : busyReason(snapshot.tags);
}

/** The reason named by the first busy tag the state carries. */
export function busyReason(tags: ReadonlySet<string>): string {
  for (const [tag, reason] of Object.entries(BUSY_REASONS)) if (tags.has(tag)) return reason;
  return 'not possible in this state';
}
