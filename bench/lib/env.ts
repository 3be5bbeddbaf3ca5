import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BENCH = join(ROOT, 'bench');
export const WATCHDOG = join(ROOT, 'bin/watchdog');

export interface TempDir {
  path: string;
  cleanup(): Promise<void>;
}

export async function tempDir(prefix: string): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true, maxRetries: 3 }) };
}

function onePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** `count` distinct loopback ports that were free a moment ago. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let tries = 0; ports.size < count && tries < count * 5; tries++) ports.add(await onePort());
  if (ports.size < count) throw new Error(`could find only ${ports.size} of ${count} free loopback ports`);
  return [...ports];
}
