import * as v from 'valibot';
import { isMap, type ReportProblem } from '../merge.ts';
import { amount, seconds } from '../numbers.ts';

const count = () => v.optional(amount('connections', { whole: true, min: 1 }));

/**
 * `Connections`: how many HTTP connections the daemon holds and how long an idle or slow one is kept, so they cannot
 * take the descriptors launches need nor starve check-ins. Unset caps follow the descriptor limit; read at start.
 */
export const ConnectionsSchema = v.strictObject(
  {
    /** Open connections at most, over every address of `Urls`; default half the descriptor limit (≤ 4096). */
    MaxConnections: count(),
    /** Open connections from one client address at most; default half of MaxConnections. */
    MaxConnectionsPerSource: count(),
    /** A request's headers must have arrived this long after it began (a check-in sends them at once). */
    HeadersTimeoutSeconds: seconds(10),
    /** A whole request (headers and body) must have arrived this long after it began. */
    RequestTimeoutSeconds: seconds(60),
    /** An idle keep-alive connection is closed after this long (a check-in comes every 15 s). */
    KeepAliveTimeoutSeconds: seconds(20),
  },
  'expected a map of connection settings',
);

export type ConnectionsSettings = v.InferOutput<typeof ConnectionsSchema>;

/** A per-source cap above the total never applies; Node refuses a headers timeout over the request timeout. */
export function checkConnections(raw: Record<string, unknown>, problem: ReportProblem): void {
  const c = raw.Connections;
  if (!isMap(c)) return;
  const num = (x: unknown) => (typeof x === 'number' ? x : undefined);
  const total = num(c.MaxConnections);
  const perSource = num(c.MaxConnectionsPerSource);
  if (total !== undefined && perSource !== undefined && perSource > total)
    problem(
      ['Connections', 'MaxConnectionsPerSource'],
      `expected at most Connections.MaxConnections (${total})`,
      perSource,
    );
  const headers = num(c.HeadersTimeoutSeconds) ?? 10;
  const request = num(c.RequestTimeoutSeconds) ?? 60;
  if (headers > request)
    problem(
      ['Connections', 'HeadersTimeoutSeconds'],
      `expected at most Connections.RequestTimeoutSeconds (${request})`,
      headers,
    );
}
