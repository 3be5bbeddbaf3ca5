import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { BENCH } from '../lib/env.ts';

/** Drives bench/soak/lag-reference.mjs: `read()` closes its window and gives its p99 (ms), null if it is gone. */
export interface LagReference {
  read(): Promise<number | null>;
  close(): void;
}

export function startLagReference(): LagReference {
  const child = spawn(process.execPath, [join(BENCH, 'soak/lag-reference.mjs')], { stdio: ['pipe', 'pipe', 'ignore'] });
  let waiting: ((v: number | null) => void) | null = null;
  child.stdout.on('data', (d: Buffer) => {
    const value = Number(d.toString('utf8').trim().split('\n').at(-1));
    waiting?.(Number.isFinite(value) ? value : null);
    waiting = null;
  });
  child.on('exit', () => {
    waiting?.(null);
    waiting = null;
  });
  return {
    read: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || !child.stdin.writable) return resolve(null);
        const timer = setTimeout(() => resolve(null), 2000);
        waiting = (v) => {
          clearTimeout(timer);
          resolve(v);
        };
        child.stdin.write('scrape\n');
      }),
    close: () => child.stdin.end(),
  };
}
