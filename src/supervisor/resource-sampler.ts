import type { TreeStats } from '../process/tree-stats.ts';
import type { ResourceStatus } from './status.ts';

/** One reading of a server's tree and what the sampler made of it. */
export interface Sample {
  pid: number;
  /** When it was read (ms). */
  at: number;
  /** The tree's CPU time as read. */
  readSeconds: number;
  /** CPU time counted for this run so far: never goes down, although the tree's own sum does when a child goes. */
  cpuSeconds: number;
  cpuPercent: number;
  rssBytes: number;
  processes: number;
}

/**
 * The next sample from a reading: CPU as a percentage of one core over the time since the previous sample of the
 * same server, or since its launch (`startedAt`) for the first. A tree whose CPU sum falls (a helper exited and
 * nobody in the tree reaped it) counts 0 for that interval rather than going back.
 */
export function nextSample(
  prev: Sample | null,
  pid: number,
  read: TreeStats,
  at: number,
  startedAt: number | null,
): Sample {
  const same = prev !== null && prev.pid === pid;
  const since = same ? prev.at : (startedAt ?? at);
  const gained = same ? Math.max(0, read.cpuSeconds - prev.readSeconds) : read.cpuSeconds;
  const seconds = (at - since) / 1000;
  return {
    pid,
    at,
    readSeconds: read.cpuSeconds,
    cpuSeconds: (same ? prev.cpuSeconds : 0) + gained,
    cpuPercent: seconds > 0 ? Math.round((gained / seconds) * 1000) / 10 : 0,
    rssBytes: read.rssBytes,
    processes: read.processes,
  };
}

export interface ResourceSamplerOptions {
  /** The server's pid and launch time (ms), or null when none runs. */
  server: () => { pid: number; startedAt: number | null } | null;
  readTree: (pid: number) => Promise<TreeStats | null>;
  /** The server's player count from its `/status`, or null when it did not give one. */
  readPlayers: () => Promise<number | null>;
  /** Time between samples (Timing.ResourceSampleSeconds), read at each one: a reload changes it. */
  intervalMs: () => number;
  /** Told each new sample (the memory limit's check). */
  onSample?: (sample: Sample) => void;
  now?: () => number;
}

/**
 * Reads a running server's CPU, memory and players every interval; idle (no timer) while none runs. `wake()` is
 * called when a server starts (or is adopted), `status()` gives the last sample of the server running now.
 */
export class ResourceSampler {
  private last: Sample | null = null;
  private players: { pid: number; count: number | null } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly opts: ResourceSamplerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** A server is running: sample now and then every interval, until it has gone. */
  wake(): void {
    if (this.stopped || this.timer !== null || this.busy) return;
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One sample (exported for tests; the timer calls it). */
  async tick(): Promise<void> {
    this.timer = null;
    const server = this.opts.server();
    if (server === null) {
      this.last = null;
      this.players = null;
      return;
    }
    this.busy = true;
    try {
      const [tree, players] = await Promise.all([this.opts.readTree(server.pid), this.opts.readPlayers()]);
      // The server may have changed while /proc was read: keep only what belongs to the one running now.
      if (this.opts.server()?.pid !== server.pid) return;
      this.last = tree === null ? null : nextSample(this.last, server.pid, tree, this.now(), server.startedAt);
      this.players = { pid: server.pid, count: players };
      if (this.last !== null) this.opts.onSample?.(this.last);
    } finally {
      this.busy = false;
      if (!this.stopped) {
        this.timer = setTimeout(() => void this.tick(), Math.max(250, this.opts.intervalMs()));
        this.timer.unref();
      }
    }
  }

  /** The last sample of the server running now; null when none runs or none has been taken yet. */
  resources(pid: number | null): ResourceStatus | null {
    const s = this.last;
    if (s === null || s.pid !== pid) return null;
    return {
      cpuPercent: s.cpuPercent,
      cpuSeconds: Math.round(s.cpuSeconds * 100) / 100,
      rssBytes: s.rssBytes,
      processes: s.processes,
      at: new Date(s.at).toISOString(),
    };
  }

  /** The server's player count at the last sample; null when unknown. */
  playerCount(pid: number | null): number | null {
    return this.players !== null && this.players.pid === pid ? this.players.count : null;
  }
}
