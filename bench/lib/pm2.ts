import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './env.ts';
import { isAlive, type MemoryReading, readMemory, signal } from './proc.ts';
import { median } from './stats.ts';
import { sleep, waitFor, wallNow } from './wait.ts';

const run = promisify(execFile);
const PM2 = join(ROOT, 'node_modules/pm2/bin/pm2');

/** A PM2 daemon of the bench's own, in a private PM2_HOME (never the user's ~/.pm2). */
export interface Pm2 {
  home: string;
  /** Starts the apps of an ecosystem object (written as ecosystem.config.cjs in the home). */
  start(apps: Array<Record<string, unknown>>): Promise<void>;
  /** `pm2 kill` for this home, then SIGKILL by the pid in its pm2.pid if the daemon is still there. */
  kill(): Promise<void>;
  version(): Promise<string>;
}

export function privatePm2(home: string): Pm2 {
  const env = { ...process.env, PM2_HOME: home, PM2_DISABLE_VERSION_CHECK: 'true', PM2_SILENT: 'true' };
  const pm2 = async (...args: string[]) => {
    try {
      return await run(process.execPath, [PM2, ...args], { env, timeout: 60_000 });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`pm2 ${args.join(' ')} failed: ${e.message} ${e.stderr ?? ''} ${e.stdout ?? ''}`.trim(), {
        cause: err,
      });
    }
  };
  return {
    home,
    async start(apps) {
      await mkdir(home, { recursive: true });
      const file = join(home, 'ecosystem.config.cjs');
      await writeFile(file, `module.exports = ${JSON.stringify({ apps }, null, 2)};\n`);
      await pm2('start', file);
    },
    async kill() {
      const pid = Number((await readFile(join(home, 'pm2.pid'), 'utf8').catch(() => '')).trim());
      await pm2('kill').catch(() => undefined);
      if (pid > 0 && isAlive(pid)) {
        signal(pid, 'SIGKILL');
        await waitFor('the PM2 daemon to exit', () => !isAlive(pid), 5000).catch(() => undefined);
      }
    },
    async version() {
      const pkg = JSON.parse(await readFile(join(ROOT, 'node_modules/pm2/package.json'), 'utf8')) as {
        version: string;
      };
      return pkg.version;
    },
  };
}

export interface Pm2IdleTrial {
  /** Spawn of `pm2 start` → it returns: the daemon started and the app launched. */
  startMs: number;
  /** Median of 5 VmRSS readings of PM2's daemon process (not its app), `settleMs` after the app answered. */
  rss: number;
  /** Of rss, medians of the same readings: anonymous and file-backed (proc.ts `MemoryReading`). */
  anon: number;
  file: number;
}

/**
 * One PM2 daemon in a fresh private home, idling with one app: started, `ready` polled until the app answers, then
 * `settleMs`, then its daemon's RSS (pid from `pm2.pid`); killed at the end.
 */
export async function pm2IdleTrial(opts: {
  home: string;
  app: Record<string, unknown>;
  ready: () => Promise<boolean>;
  settleMs: number;
}): Promise<Pm2IdleTrial> {
  const pm2 = privatePm2(opts.home);
  try {
    const t0 = wallNow();
    await pm2.start([opts.app]);
    const startMs = wallNow() - t0;
    await waitFor('the PM2 app to answer', opts.ready, 30_000, 50);
    const pid = Number((await readFile(join(opts.home, 'pm2.pid'), 'utf8')).trim());
    await sleep(opts.settleMs);
    const readings: MemoryReading[] = [];
    for (let i = 0; i < 5; i++) {
      const m = readMemory(pid);
      if (m) readings.push(m);
      await sleep(200);
    }
    const med = (pick: (m: MemoryReading) => number) => median(readings.map(pick));
    return { startMs, rss: med((m) => m.rss), anon: med((m) => m.anon), file: med((m) => m.file) };
  } finally {
    await pm2.kill();
  }
}
