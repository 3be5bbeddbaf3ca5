import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite, type Test } from 'uvu';
import { killAndRemove } from '../../src/process/cgroup.ts';
import { cgroupFolderOf } from '../../src/process/tracking.ts';

/**
 * Repository root, for locating bin/ and fixtures from any test. The runner runs a compiled copy of the files
 * (compile.ts) from elsewhere, and says where the repository is.
 */
export const ROOT = process.env.WATCHDOG_TEST_ROOT ?? fileURLToPath(new URL('../../', import.meta.url));

/**
 * A TCP port that was free a moment ago on 127.0.0.1. Picked at random below the kernel's ephemeral range: a port
 * from bind(0) is one the kernel also hands out as the local end of outgoing connections and to other processes'
 * bind(0), so with test files running side by side it was sometimes taken before the daemon bound it (seen:
 * EADDRINUSE on a port freePort had just given). Never the same port twice in a test process; bounded: 50 tries,
 * then the kernel's pick.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const span = Math.min(12_000, low - 1024);
  for (let i = 0; i < 50 && span > 0; i++) {
    const port = low - 1 - Math.floor(Math.random() * span);
    if (given.has(port) || !(await bindable(port))) continue;
    given.add(port);
    return port;
  }
  const port = await kernelPort();
  given.add(port);
  return port;
}

const given = new Set<number>();

/** The kernel's ephemeral port range (Linux); elsewhere the IANA range. */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low && high) return [low, high];
  } catch {
    // not Linux
  }
  return [49152, 65535];
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
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

/**
 * A fresh folder under the system's temp folder. Its cleanup also removes the cgroups of a daemon that worked there
 * or in a folder directly inside it (process tracking): a daemon killed by a test, or one that left servers
 * running, leaves them behind otherwise.
 */
export async function tempDir(prefix = 'wd-test-'): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  const cleanup = async () => {
    const inside = await readdir(path, { withFileTypes: true }).catch(() => []);
    for (const dir of [path, ...inside.filter((e) => e.isDirectory()).map((e) => join(path, e.name))]) {
      const cgroups = await cgroupFolderOf(dir);
      if (cgroups) await killAndRemove(cgroups, 2000);
    }
    await rm(path, { recursive: true, force: true });
  };
  return { path, cleanup };
}

/**
 * A uvu suite whose every test gets a fresh temp folder as `ctx.dir`, removed after the test. `ctx` seeds the rest of
 * the context; `before` runs once the folder exists, `after` before it is removed (stop processes there first).
 */
export function tempSuite<C extends object = Record<never, never>>(
  name: string,
  opts: {
    prefix?: string;
    ctx?: C;
    before?: (ctx: C & { dir: string }) => unknown;
    after?: (ctx: C & { dir: string }) => unknown;
  } = {},
): Test<C & { dir: string }> {
  const s = suite<C & { dir: string }>(name, { ...(opts.ctx as C), dir: '' });
  let cleanup: (() => Promise<void>) | undefined;
  s.before.each(async (ctx) => {
    const t = await tempDir(opts.prefix);
    ctx.dir = t.path;
    cleanup = t.cleanup;
    await opts.before?.(ctx);
  });
  s.after.each(async (ctx) => {
    try {
      await opts.after?.(ctx);
    } finally {
      await cleanup?.();
      cleanup = undefined;
    }
  });
  return s;
}

/**
 * Polls `check` until it returns a truthy value or `timeoutMs` passes (then throws with `what`). The first polls
 * come every 25 ms, then further apart, up to 200 ms: most checks ask a daemon over HTTP, and a wait of seconds
 * polled every 25 ms cost the daemon and the test more CPU than the thing waited for. A caller that needs its
 * moment precisely gives `everyMs`, and is polled at that pace throughout.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  everyMs?: number,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  let pause = everyMs ?? 25;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, pause));
    if (everyMs === undefined) pause = Math.min(200, pause * 1.5);
  }
}

/**
 * `work`'s outcome, or a rejection naming `what` once `ms` have passed without one: a far deadline that only catches
 * a hang (a duration is a benchmark figure, not a test). The timer never outlives the call.
 */
export async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
