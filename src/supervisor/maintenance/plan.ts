/** The maintenance region read off the machine: its plan for data.json, its status, its facts for the bus and log. */
import type { SnapshotFrom } from 'xstate';
import type { instanceMachine } from '../../../machines/instance.ts';
import type { InstanceEmitted, SavedMaintenance } from '../../../machines/instance.types.ts';
import type { Bus } from '../../bus.ts';
import type { Logger } from '../../log.ts';
import type { MaintenancePolicy } from '../contract.ts';
import type { MaintenanceStatus } from '../status.ts';

export type InstanceSnapshot = SnapshotFrom<typeof instanceMachine>;

const action = (snap: InstanceSnapshot, state: 'forced' | 'carrying-out') =>
  snap.matches({ maintenance: { action: state } });

/** The plan to keep, in wall times only: the monotonic `due` and `ends` mean nothing to the next daemon. */
export function savedPlanOf(snap: InstanceSnapshot): SavedMaintenance {
  const { pending, hold } = snap.context.maintenance;
  const forced = action(snap, 'forced');
  const carried = forced || action(snap, 'carrying-out');
  const asked = snap.matches({ maintenance: { action: { pending: { waiting: { RoundEnd: 'asked' } } } } });
  const kept = hold && { since: hold.since, until: hold.until, reason: hold.reason };
  if (pending === null) return { pending: null, hold: kept };
  const { due: _due, ...wall } = pending;
  return { pending: { ...wall, asked, carried, forced }, hold: kept };
}

/** Keeps the plan in data.json as it changes; from `start`, so a new machine's empty plan never overwrites it. */
export function createPlanKeeper(save: (plan: SavedMaintenance) => Promise<void>) {
  let kept: SavedMaintenance | null = null;
  let last: string | null = null;
  const keeper = {
    /** `saved` is what data.json holds now. */
    start(saved: SavedMaintenance | null, snap: InstanceSnapshot) {
      kept = saved ?? { pending: null, hold: null };
      last = JSON.stringify(kept);
      keeper.seen(snap);
    },
    kept: () => kept,
    seen(snap: InstanceSnapshot) {
      if (last === null) return;
      const plan = savedPlanOf(snap);
      const json = JSON.stringify(plan);
      if (json === last) return;
      last = json;
      kept = plan;
      void save(plan);
    },
  };
  return keeper;
}

export type PlanKeeper = ReturnType<typeof createPlanKeeper>;

function waitingFor(snap: InstanceSnapshot): NonNullable<MaintenanceStatus['pending']>['waitingFor'] {
  const at = (state: 'on-hold' | 'waiting') => snap.matches({ maintenance: { action: { pending: state } } });
  if (at('on-hold')) return 'hold';
  if (snap.matches({ maintenance: { action: { pending: { waiting: 'Empty' } } } })) return 'Empty';
  if (at('waiting')) return 'RoundEnd';
  return 'exit';
}

const iso = (t: number) => new Date(t).toISOString();

/** The status's `maintenance` at `now` (monotonic: a hold shows until its timer runs out, whatever the wall does). */
export function maintenanceStatus(
  snap: InstanceSnapshot,
  now: number,
  schedule: { policy: MaintenancePolicy; nextRestart: number | null; nextCheck: number | null },
  staged: string | null = null,
): MaintenanceStatus {
  const { pending: p, hold } = snap.context.maintenance;
  const h = hold !== null && hold.ends > now && snap.matches({ maintenance: { hold: 'held' } }) ? hold : null;
  return {
    policy: schedule.policy,
    pending:
      p === null
        ? null
        : {
            action: p.action,
            source: p.source,
            when: p.when,
            since: iso(p.since),
            deadline: iso(p.deadline),
            waitingFor: waitingFor(snap),
            ...(p.restore ? { restore: p.restore } : {}),
          },
    nextRestart: schedule.nextRestart === null ? null : iso(schedule.nextRestart),
    nextUpdateCheck: schedule.nextCheck === null ? null : iso(schedule.nextCheck),
    staged,
    hold: h === null ? null : { reason: h.reason, since: iso(h.since), until: iso(h.until) },
  };
}

/** False for a fact that is not the maintenance region's. */
export function announce(host: { key: string; bus: Bus; log: Logger }, e: InstanceEmitted, at: number): boolean {
  const { key, bus, log } = host;
  switch (e.type) {
    case 'maintenance-pending': {
      const p = e.pending;
      log.info(`maintenance ${p.action} pending`, {
        when: p.when,
        source: p.source,
        deadline: iso(p.deadline),
        ...(p.reason ? { reason: p.reason } : {}),
        ...(p.by ? { by: p.by } : {}),
      });
      bus.emit('instance:maintenance-pending', {
        key,
        kind: e.kind,
        when: p.when,
        deadline: p.deadline,
        ...(p.reason ? { reason: p.reason } : {}),
        ...(p.by ? { by: p.by } : {}),
        at: p.since,
      });
      break;
    }
    case 'hold-began':
      log.info('maintenance held', { until: iso(e.hold.until), reason: e.hold.reason });
      bus.emit('instance:maintenance-pending', {
        key,
        kind: 'hold',
        reason: e.hold.reason,
        until: e.hold.until,
        at: e.hold.since,
      });
      break;
    case 'maintenance-done':
      if (e.kind === 'hold') log.info(e.how === 'expired' ? 'maintenance hold ran out' : 'maintenance hold released');
      bus.emit('instance:maintenance-done', { key, kind: e.kind, how: e.how, at });
      break;
    case 'maintenance-step':
      if (e.step === 'ask-leave')
        log.info('maintenance: asking the server to leave at the end of its round (POST /update)');
      else
        log.info(
          e.forced ? 'maintenance deadline reached; restarting the server' : 'maintenance: restarting the server',
        );
      break;
    default:
      return false;
  }
  return true;
}
