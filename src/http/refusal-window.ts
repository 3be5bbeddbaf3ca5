import { isIP } from 'node:net';

/** Sources tracked at once; beyond them, new sources share one bucket, so varying addresses cannot grow the table. */
export const MAX_SOURCES = 1024;
/** The bucket of sources past `MAX_SOURCES`. */
export const OTHER_SOURCES = 'other sources';

/** One summary: `count` refusals from `source` that were not written in full, over `seconds`. */
export interface RefusalSummary {
  source: string;
  count: number;
  seconds: number;
  /** `1,234 refused requests from 127.0.0.1 in the last 60 s` */
  text: string;
}

export interface RefusalWindowOptions {
  /** The summary interval in ms, read whenever the timer starts (a reload applies from the next quiet spell). */
  everyMs: () => number;
  onSummary: (summary: RefusalSummary) => void;
  maxSources?: number;
  now?: () => number;
}

/**
 * Where refusals of one source are counted: an IPv6 client is taken by its /64, the block one host normally has,
 * so a stranger cycling through its own addresses is still one source; anything else by its address.
 */
export function sourceOf(remote: string | undefined): string {
  if (remote === undefined || remote === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remote);
  if (mapped?.[1]) return mapped[1];
  if (isIP(remote) !== 6) return remote;
  const [head = '', tail = ''] = remote.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = remote.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * Rate-limits what strangers can make us write, like the rejected check-in log: the first refusal from a source
 * is written in full (`admit` says true), the rest are counted and summarised once per interval while they go on.
 * A source quiet for a whole interval is forgotten, so its next refusal is written in full again.
 */
export class RefusalWindow {
  readonly #sources = new Map<string, { count: number; since: number }>();
  readonly #opts: RefusalWindowOptions;
  readonly #max: number;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: RefusalWindowOptions) {
    this.#opts = opts;
    this.#max = opts.maxSources ?? MAX_SOURCES;
    this.#now = opts.now ?? Date.now;
  }

  /** Counts a refusal from `remote`; true when it is to be written in full. */
  admit(remote: string | undefined): boolean {
    let source = sourceOf(remote);
    if (!this.#sources.has(source) && this.#sources.size >= this.#max) source = OTHER_SOURCES;
    const entry = this.#sources.get(source);
    if (entry) {
      entry.count += 1;
      return false;
    }
    // The shared bucket is only ever summarised: its first refusal says nothing about the next source.
    const shared = source === OTHER_SOURCES;
    this.#sources.set(source, { count: shared ? 1 : 0, since: this.#now() });
    this.#schedule();
    return !shared;
  }

  /** Writes the summaries due now and forgets quiet sources (the timer calls it; tests may too). */
  flush(): void {
    const now = this.#now();
    for (const [source, entry] of this.#sources) {
      if (entry.count === 0) {
        this.#sources.delete(source);
        continue;
      }
      const seconds = Math.max(1, Math.round((now - entry.since) / 1000));
      const count = entry.count;
      entry.count = 0;
      entry.since = now;
      try {
        this.#opts.onSummary({ source, count, seconds, text: summaryText(source, count, seconds) });
      } catch {
        // A reporter's failure must not stop the others' summaries.
      }
    }
    if (this.#sources.size === 0) this.stop();
  }

  /** Stops the timer (the table is kept; a later refusal starts it again). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.flush(), Math.max(10, this.#opts.everyMs()));
    this.#timer.unref();
  }
}

export function summaryText(source: string, count: number, seconds: number): string {
  const n = count.toLocaleString('en-US');
  return `${n} refused request${count === 1 ? '' : 's'} from ${source} in the last ${seconds.toLocaleString('en-US')} s`;
}
