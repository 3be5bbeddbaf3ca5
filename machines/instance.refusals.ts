/** Why a control request is refused: the machine decides (`snapshot.can`), the state's tags say why. */
import type { InstanceEvent, MaintenancePolicy, Stamp } from './instance.types.ts';

/** How a control action was asked for; `at` is the supervisor's stamp, the machine has no clock. */
export interface ControlArgs {
  /** Restart, update and restore: carry it out by this policy instead of at once. */
  when?: MaintenancePolicy;
  /** `by boss from 10.0.0.5`; '' when unknown. */
  by?: string;
  /** Rollback: also put back the snapshot taken before the installed build came. */
  withData?: boolean;
  snapshot?: string;
  at?: Stamp;
}

const NO_STAMP: Stamp = { wall: 0, mono: 0 };

/** The control requests and the event each sends: the one table of them (routes, CLI and status list its keys). */
export const CONTROL_EVENT = {
  restart: (): InstanceEvent => ({ type: 'RESTART' }),
  update: ({ when, by }: ControlArgs): InstanceEvent => ({
    type: 'UPDATE_CHECK',
    ...(when === undefined ? {} : { when }),
    ...(by ? { by } : {}),
  }),
  stop: ({ by = '', at = NO_STAMP }: ControlArgs): InstanceEvent => ({
    type: 'STOP',
    by,
    at: new Date(at.wall).toISOString(),
  }),
  rollback: ({ withData }: ControlArgs): InstanceEvent => ({ type: 'ROLLBACK', withData: withData === true }),
  restore: ({ snapshot = '' }: ControlArgs): InstanceEvent => ({ type: 'RESTORE', id: snapshot }),
};

export type ControlAction = keyof typeof CONTROL_EVENT;
export const CONTROL_ACTIONS = Object.keys(CONTROL_EVENT) as ControlAction[];

/** The actions each request option goes with: the routes refuse it with another (400), the CLI before it asks. */
const OPTION_ACTIONS: Record<'when' | 'withData' | 'backup', readonly ControlAction[]> = {
  // A stop or a rollback is never put off to a round end.
  when: ['restart', 'update', 'restore'],
  withData: ['rollback'],
  backup: ['restore'],
};
export const takesOption = (action: ControlAction, option: keyof typeof OPTION_ACTIONS): boolean =>
  OPTION_ACTIONS[option].includes(action);

/** A restart with `when`, and a restore unless `Now`, are MAINTAIN: they wait for their moment as maintenance does. */
export function controlEvent(action: ControlAction, args: ControlArgs): InstanceEvent {
  const { when, snapshot, by, at = NO_STAMP } = args;
  const asker = by ? { by } : {};
  if (action === 'restart' && when !== undefined) return { type: 'MAINTAIN', source: 'request', when, ...asker, at };
  if (action !== 'restore' || when === 'Now') return CONTROL_EVENT[action](args);
  return {
    type: 'MAINTAIN',
    source: 'request',
    ...(when ? { when } : {}),
    reason: `restore of backup ${snapshot}`,
    ...(snapshot ? { restore: snapshot } : {}),
    ...asker,
    at,
  };
}

/** The reason a busy state refuses a request: every state that refuses one carries `busy` and one of these tags. */
export const BUSY_REASONS = {
  installing: 'an update is being installed; roll back once it is done',
  'backing-off': 'the server is between crash relaunches; stop the instance, then roll back',
  'launch-blocked': 'the launch is blocked and retried with back-off; stop the instance, then roll back',
  'rolling-back': 'a rollback is already under way',
  restoring: 'a backup is being restored',
  'shutting-down': 'the watchdog is shutting down',
} as const;

export type BusyTag = keyof typeof BUSY_REASONS;

export interface ControlView {
  status: string;
  tags: ReadonlySet<string>;
  can(event: InstanceEvent): boolean;
}

/** What the machine cannot know: an update provider is configured, a previous build (`bin.prev`) is kept. */
export interface ControlFacts {
  canUpdate: boolean;
  canRollback: boolean;
  /** A Dummy update installs no build, so it leaves no previous one either. */
  updateType?: string;
}

/** Why `action` cannot be done now, or null: refused exactly when the machine cannot take its event. */
export function refusalOf(snapshot: ControlView, action: ControlAction, facts: ControlFacts): string | null {
  const busy = busyRefusal(snapshot, action);
  if (busy !== null) return busy;
  if (action === 'update' && !facts.canUpdate) return 'no update provider: UpdateType is not set for this instance';
  if (action === 'rollback' && !facts.canRollback)
    return facts.updateType === 'Dummy'
      ? 'no previous build to roll back to: UpdateType Dummy only restarts the server and keeps no build in bin.prev (put the old build in bin/ by hand)'
      : 'no previous build to roll back to (bin.prev is missing; one is kept after each update)';
  return null;
}

/** Why the machine itself cannot take `action` now, or null. */
export function busyRefusal(snapshot: ControlView, action: ControlAction): string | null {
  if (snapshot.status !== 'active') return BUSY_REASONS['shutting-down'];
  if (snapshot.can(CONTROL_EVENT[action]({}))) return null;
  return Object.entries(BUSY_REASONS).find(([tag]) => snapshot.tags.has(tag))?.[1] ?? 'not possible in this state';
}
