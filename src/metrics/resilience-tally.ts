import { type Bus, REFUSED_ROUTES, subscribe } from '../bus.ts';
import type { ResilienceFamilies } from './resilience.ts';
import { Tally } from './tally.ts';

/** HTTP statuses a refusal can have; anything else is counted as `other`, so the label set stays fixed. */
const STATUSES = new Set(['400', '401', '403', '404', '503']);
const FAULT_KINDS = ['uncaught-exception', 'unhandled-rejection'] as const;

/**
 * Tallies the bus from the daemon's start (like the collector's other counters) and writes the totals into the
 * families at each scrape. Every label value comes from a fixed list or a configured instance key, never from
 * what a client sent.
 */
export function tallyResilience(bus: Bus) {
  const dropped = new Tally<'instance'>();
  const refused = new Tally<'route' | 'status'>();
  const faults = new Tally<'kind'>();
  const unsubscribe = subscribe(bus, {
    'log:dropped': (e) => dropped.inc({ instance: e.key }, e.lines),
    'request:refused': (e) => {
      const status = String(e.status);
      refused.inc({ route: e.route, status: STATUSES.has(status) ? status : 'other' });
    },
    'daemon:fault': (e) => faults.inc({ kind: e.kind }),
  });
  return {
    /** Sets the families to the totals; `instances` get a 0 so rate() starts from the first scrape. */
    refresh(f: ResilienceFamilies, instances: readonly string[]): void {
      for (const c of [f.logDropped, f.refused, f.faults]) c.reset();
      for (const instance of instances) f.logDropped.inc({ instance }, 0);
      for (const route of REFUSED_ROUTES) f.refused.inc({ route, status: '401' }, 0);
      for (const kind of FAULT_KINDS) f.faults.inc({ kind }, 0);
      for (const { labels, n } of dropped.entries()) f.logDropped.inc(labels, n);
      for (const { labels, n } of refused.entries()) f.refused.inc(labels, n);
      for (const { labels, n } of faults.entries()) f.faults.inc(labels, n);
    },
    stop: unsubscribe,
  };
}
