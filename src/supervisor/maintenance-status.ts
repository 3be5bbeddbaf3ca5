/** The `maintenance` field of the status JSON, from a maintenance plan at a time (pure). */
import type { MaintenancePolicy, MaintenanceStatus } from './contract.ts';
import { heldAt, type MaintenancePlan, type PendingAction, waitsForHold } from './maintenance-plan.ts';

const iso = (t: number) => new Date(t).toISOString();

/** What a pending action waits for now: the hold, the players, the round end, or the exit it asked for. */
function waitingFor(
  plan: MaintenancePlan,
  p: PendingAction,
  now: number,
): NonNullable<MaintenanceStatus['pending']>['waitingFor'] {
  if (waitsForHold(plan, now)) return 'hold';
  if (p.carried || p.when === 'Now') return 'exit';
  return p.when === 'Empty' ? 'players' : 'round-end';
}

export function maintenanceStatus(
  plan: MaintenancePlan,
  now: number,
  schedule: { policy: MaintenancePolicy; nextRestart: number | null; nextCheck: number | null },
  staged: string | null = null,
): MaintenanceStatus {
  const p = plan.pending;
  const h = heldAt(plan, now) ? plan.hold : null;
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
            waitingFor: waitingFor(plan, p, now),
          },
    nextRestart: schedule.nextRestart === null ? null : iso(schedule.nextRestart),
    nextUpdateCheck: schedule.nextCheck === null ? null : iso(schedule.nextCheck),
    staged,
    hold: h === null ? null : { reason: h.reason, since: iso(h.since), until: iso(h.until) },
  };
}
