/** A real daemon under a low descriptor limit (`prlimit`), and idle connections from 127.0.0.1 to press on it. */
import { connect, type Socket } from 'node:net';
import { type RunningDaemon, startDaemon } from '../../../_support/daemon.ts';
import { tempDir, waitFor } from '../../../_support/env.ts';

/** The daemon's descriptor limit (soft and hard). */
export const LIMIT = 256;

export type IdleConnections = ReturnType<typeof holdIdle>;

/** Opens idle connections (they never send a byte) to `port`, about `perSecond` (in batches every 10 ms), at most `max`. */
function holdIdle(port: number, perSecond: number, max: number) {
  const sockets = new Set<Socket>();
  let opened = 0;
  let closedByDaemon = 0;
  const batch = Math.max(1, Math.round(perSecond / 100));
  const timer = setInterval(() => {
    for (let i = 0; i < batch && opened < max; i++) {
      opened += 1;
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.on('close', () => {
        if (sockets.delete(s)) closedByDaemon += 1;
      });
      sockets.add(s);
    }
  }, 10);
  return {
    figures: () => ({ opened, held: sockets.size, closedByDaemon }),
    /** Until the daemon is at its limit: it then accepts a connection only to close it at once (libuv's EMFILE rule). */
    outOfDescriptors: () => waitFor('the daemon out of descriptors', () => closedByDaemon >= 20 || undefined, 10_000),
    /** Stops opening more, and closes `n` of those held: a few descriptors come free, not enough for much. */
    drop(n: number) {
      clearInterval(timer);
      for (const s of [...sockets].slice(0, n)) {
        sockets.delete(s);
        s.destroy();
      }
    },
    release() {
      clearInterval(timer);
      const all = [...sockets];
      sockets.clear();
      for (const s of all) s.destroy();
    },
  };
}

export interface LimitedDaemon {
  /** The daemon's working folder. */
  dir: string;
  daemon: RunningDaemon;
  /** Starts opening idle connections to the daemon's HTTP port (see holdIdle); released when the run ends. */
  press(perSecond: number, max: number): IdleConnections;
}

/**
 * Runs `use` against a daemon started with `config(dir)` under a descriptor limit of LIMIT, in a temp folder;
 * the connections, the daemon and the folder are gone afterwards, whether `use` passed or not.
 */
export async function withLimitedDaemon(
  prefix: string,
  config: (dir: string) => Promise<string>,
  use: (run: LimitedDaemon) => Promise<void>,
): Promise<void> {
  const tmp = await tempDir(prefix);
  let daemon: RunningDaemon | undefined;
  let pressure: IdleConnections | undefined;
  try {
    const d = await startDaemon(await config(tmp.path), {
      dir: tmp.path,
      wrap: ['prlimit', `--nofile=${LIMIT}:${LIMIT}`, '--'],
    });
    daemon = d;
    const press = (perSecond: number, max: number) => {
      pressure = holdIdle(Number(new URL(d.url).port), perSecond, max);
      return pressure;
    };
    await use({ dir: tmp.path, daemon: d, press });
  } finally {
    pressure?.release();
    await daemon?.stop();
    await tmp.cleanup();
  }
}
