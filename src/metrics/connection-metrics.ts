import { Counter, Gauge, type Registry } from 'prom-client';

/** The HTTP connection guard's figures (src/http/connection-guard.ts), as the daemon hands them to the metrics. */
export interface ConnectionFigures {
  open: number;
  refused: Record<'total' | 'source', number>;
  evicted: Record<'total' | 'source', number>;
}

export type ConnectionFamilies = ReturnType<typeof createConnectionFamilies>;

/** The connection metric families, registered in `registry`. */
export function createConnectionFamilies(registry: Registry) {
  const registers = [registry];
  // biome-ignore format: one metric a line
  return {
    open: new Gauge({ name: 'watchdog_http_connections', help: 'HTTP connections open now, over every listening address.', registers }),
    dropped: new Counter({ name: 'watchdog_http_connections_dropped_total', help: 'HTTP connections refused (action="refused") or closed to make room (action="evicted") because a cap was reached: cap="total" (Connections.MaxConnections) or cap="source" (MaxConnectionsPerSource).', labelNames: ['action', 'cap'] as const, registers }),
  };
}

/** Sets the families from the guard's figures; counters are reset and added, as the collector does for its own. */
export function setConnectionFamilies(f: ConnectionFamilies, figures: ConnectionFigures): void {
  f.open.set(figures.open);
  f.dropped.reset();
  for (const cap of ['total', 'source'] as const) {
    f.dropped.inc({ action: 'refused', cap }, figures.refused[cap]);
    f.dropped.inc({ action: 'evicted', cap }, figures.evicted[cap]);
  }
}
