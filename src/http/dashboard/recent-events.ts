import type { Bus, BusEvents } from '../../bus.ts';

/** The bus facts the dashboard shows; each goes out as an SSE event of the same name. */
export const STREAMED = [
  'instance:state',
  'instance:alert',
  'instance:update',
  'instance:restart',
  'instance:launch',
  'instance:checkin',
  'instance:maintenance-pending',
  'instance:maintenance-done',
  'instance:control',
  'instance:launch-blocked',
  'instance:launch-unblocked',
] as const;
export type Streamed = (typeof STREAMED)[number];
export type RecentEvent = { type: Streamed; event: BusEvents[Streamed] };

/** Progress and check-ins are too frequent to list; they only update what the page shows. */
const quiet = (type: Streamed, e: BusEvents[Streamed]) =>
  type === 'instance:checkin' ||
  (type === 'instance:update' && 'phase' in e && !['check', 'done', 'none', 'failed'].includes(e.phase));

/**
 * The last `keep` listed facts, oldest first, for a freshly opened dashboard's `hello`. Started with the daemon, so
 * what happened before anyone opened the dashboard is still listed.
 */
export function recordRecentEvents(bus: Bus, keep = 100): { list(): readonly RecentEvent[] } {
  const recent: RecentEvent[] = [];
  for (const type of STREAMED) {
    bus.on(type, (event) => {
      if (quiet(type, event)) return;
      recent.push({ type, event });
      if (recent.length > keep) recent.shift();
    });
  }
  return { list: () => recent };
}
