import { readFile } from 'node:fs/promises';
import * as assert from 'uvu/assert';
import type { RunningDaemon } from './daemon.ts';

const MB = 1024 * 1024;

/** A process's resident set in bytes (VmRSS of /proc/<pid>/status). */
export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

/** The daemon's RSS with nothing going on: the median of five readings. */
export async function idleRss(d: RunningDaemon): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    readings.push(await rssOf(d.proc.pid as number));
    await new Promise((r) => setTimeout(r, 100));
  }
  return readings.sort((a, b) => a - b)[2] ?? 0;
}

/**
 * Runs `fault` while sampling the daemon's RSS and asking its `/health` over and over, then asserts what the issue
 * asks of a daemon under a fault: every `/health` answered 200 within 1 s, and RSS within 100 MB of `idle`.
 */
export async function unharmedWhile(d: RunningDaemon, idle: number, fault: () => Promise<void>): Promise<void> {
  let peak = 0;
  const failed: string[] = [];
  let done = false;
  const sample = async () => {
    peak = Math.max(peak, await rssOf(d.proc.pid as number).catch(() => 0));
    try {
      const res = await fetch(`${d.url}/health`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status !== 200) failed.push(`HTTP ${res.status}`);
    } catch (err) {
      failed.push(String(err));
    }
  };
  const watch = (async () => {
    while (!done) {
      await sample();
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    await fault();
  } finally {
    done = true;
    await watch;
  }
  // And once the fault is over: the daemon is still there.
  await sample();
  assert.equal(failed, [], '/health answered within 1 s every time');
  const growth = (peak - idle) / MB;
  assert.ok(growth < 100, `RSS grew ${growth.toFixed(0)} MB over its idle ${(idle / MB).toFixed(0)} MB`);
}
