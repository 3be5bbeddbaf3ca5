/** The `maintenance:*` facts the runner puts on the bus: once when an action or hold begins, once when it ends. */
import type { BusEvents, MaintenanceKind } from '../bus.ts';
import type { PendingAction } from './maintenance-plan.ts';
import type { MaintenanceHost } from './maintenance-types.ts';

export type DoneHow = BusEvents['maintenance:done']['how'];

/** A scheduled restart, a person's restart or an update, as the notifications name them. */
export const kindOf = (p: PendingAction): MaintenanceKind =>
  p.action === 'update' ? 'update' : p.source === 'schedule' ? 'scheduled-restart' : 'restart';

export function announcePending(host: MaintenanceHost, p: PendingAction, reason?: string): void {
  host.bus.emit('maintenance:pending', {
    key: host.key,
    kind: kindOf(p),
    when: p.when,
    deadline: p.deadline,
    ...(reason ? { reason } : {}),
    at: p.since,
  });
}

export function announceHold(host: MaintenanceHost, hold: { reason: string; until: number; at: number }): void {
  host.bus.emit('maintenance:pending', { key: host.key, kind: 'hold', ...hold });
}

export function announceDone(host: MaintenanceHost, kind: MaintenanceKind, how: DoneHow, at: number): void {
  host.bus.emit('maintenance:done', { key: host.key, kind, how, at });
}
