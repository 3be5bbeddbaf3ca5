/**
 * Counts by label set, in plain Maps: what the bus reports is tallied from the daemon's start, while prom-client
 * is loaded only when /metrics is first scraped (collector.ts), so a daemon nobody scrapes never carries it.
 */
export class Tally<L extends string> {
  readonly #counts = new Map<string, { labels: Record<L, string>; n: number }>();

  inc(labels: Record<L, string>, n = 1): void {
    // JSON of the values in key order: label values may hold any character.
    const id = JSON.stringify(
      Object.keys(labels)
        .sort()
        .map((k) => labels[k as L]),
    );
    const entry = this.#counts.get(id);
    if (entry) entry.n += n;
    else this.#counts.set(id, { labels, n });
  }

  entries(): Iterable<{ labels: Record<L, string>; n: number }> {
    return this.#counts.values();
  }
}
