import { type Bus, subscribe } from '../bus.ts';
import { Tally } from './tally.ts';
import type { UpdateCheckFamilies } from './update-checks.ts';

const RESULTS = ['available', 'none', 'failed'] as const;

/** Tallies `instance:update-check` from the daemon's start and writes it into the families at each scrape. */
export function tallyUpdateChecks(bus: Bus) {
  const checks = new Tally<'instance' | 'result'>();
  const lastSuccess = new Map<string, number>();
  const unsubscribe = subscribe(bus, {
    'instance:update-check': (e) => {
      checks.inc({ instance: e.key, result: e.ok ? (e.available ? 'available' : 'none') : 'failed' });
      if (e.ok) lastSuccess.set(e.key, e.at);
    },
  });
  return {
    /** Sets the families to the totals; `instances` get a 0 for each result so rate() starts from the first scrape. */
    refresh(f: UpdateCheckFamilies, instances: readonly string[]): void {
      f.checks.reset();
      f.lastSuccess.reset();
      for (const instance of instances) for (const result of RESULTS) f.checks.inc({ instance, result }, 0);
      for (const { labels, n } of checks.entries()) f.checks.inc(labels, n);
      for (const [instance, at] of lastSuccess)
        if (instances.includes(instance)) f.lastSuccess.set({ instance }, at / 1000);
    },
    stop: unsubscribe,
  };
}
