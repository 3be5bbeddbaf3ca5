/** What the maintenance region emits, on the bus (the notifier words it) and in the instance's log. */
import type { InstanceEmitted } from '../../../machines/instance.types.ts';
import type { Bus } from '../../bus.ts';
import type { Logger } from '../../log.ts';

const iso = (t: number) => new Date(t).toISOString();

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
