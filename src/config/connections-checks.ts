import { type ConfigPath, isMap } from './merge.ts';

/**
 * `Connections`: a per-source cap above the total one could never apply, and Node refuses a headers timeout longer
 * than the request timeout. Reads the raw settings defensively, as checks.ts does (a wrong type is the schema's).
 */
export function checkConnections(
  raw: Record<string, unknown>,
  problem: (path: ConfigPath, expected: string, found: unknown) => void,
): void {
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
