/**
 * Shared parts of the real-engine suites (not a suite itself): the engine bundle unpacked once per test process
 * (bench/peers/robust-engine/bundle.ts), an instance's ports and config.toml, an appsettings.yml for engines, and a
 * suite that is registered as skipped, with one line saying why, when the engine cannot run here.
 */
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { readFileSync, rmSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Test } from 'uvu';
import {
  ENGINE_CHECKIN_SECONDS,
  ENGINE_SKIP,
  engineBundle,
  engineConfigToml,
} from '../../../bench/peers/robust-engine/bundle.ts';
import { appsettingsYaml } from '../../_support/config.ts';
import { basic, type DaemonCtx, daemonSuite, type RunningDaemon, waitState } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { killGroup } from '../../_support/procs.ts';
import { skippedSuite } from '../../_support/skip.ts';
import { type BuiltArchive, describeArchive } from '../../fixtures/builds/build.ts';

export { ENGINE_CHECKIN_SECONDS };

if (ENGINE_SKIP) console.log(`engine: skipped (${ENGINE_SKIP})`);

export const TOKEN = 'engine-tok';

/** Startup takes 1.5 s on a quiet machine (3.2 s seen); a loaded 2-core machine needs room (over 45 s seen). */
const START_MS = 120_000;

/** Waits until instance `key` runs an engine that has checked in (not `notPid`: a relaunch); its status. */
export const running = (d: RunningDaemon, key: string, notPid?: number) =>
  waitState(d, key, TOKEN, 'server.running', { notPid, timeoutMs: START_MS });

let exitHook = false;

/** The bundle, unpacked once per test process and removed when the process exits (every suite file shares it). */
export async function unpackedEngine(): Promise<{ dir: string; program: string }> {
  const b = await engineBundle();
  if (!exitHook) {
    exitHook = true;
    // The temporary parent engineBundle() made; synchronous: nothing asynchronous runs at exit.
    process.once('exit', () => rmSync(dirname(b.dir), { recursive: true, force: true }));
  }
  return b;
}

/** A UDP port that was free a moment ago on 127.0.0.1: the engine's game port (`net.port`). */
function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const sock = createSocket('udp4');
    sock.once('error', reject);
    sock.bind(0, '127.0.0.1', () => {
      const { port } = sock.address();
      sock.close(() => resolve(port));
    });
  });
}

export interface EngineInstance {
  key: string;
  /** The status API's TCP port: `ApiPort`. */
  statusPort: number;
  gamePort: number;
  /** `game.hostname` in config.toml. */
  hostname: string;
}

/** Picks an instance's free ports and writes its `instances/<key>/config.toml` (the daemon never writes one). */
export async function prepareEngine(dir: string, key: string): Promise<EngineInstance> {
  const [statusPort, gamePort] = [await freePort(), await freeUdpPort()];
  const hostname = `engine ${key}`;
  await mkdir(join(dir, 'instances', key), { recursive: true });
  await writeFile(join(dir, 'instances', key, 'config.toml'), engineConfigToml({ statusPort, gamePort, hostname }));
  return { key, statusPort, gamePort, hostname };
}

export interface EngineYamlInstance {
  engine: EngineInstance;
  /** Absolute `Robust.Server` of the unpacked bundle, or a path relative to the instance folder. */
  runCommand: string;
  /** Must exceed the engine's fixed 15 s check-in period (default 30). */
  timeoutSeconds?: number;
  args?: string[];
  /** More of the instance's keys (UpdateType, Updates). */
  more?: Record<string, unknown>;
}

/**
 * appsettings.yml for engines: loopback (`urlsPort` fixed for PersistServers, where a server left running checks in
 * to the address it was launched with), short waits, and no `watchdog.checkin_interval` (not an engine cvar).
 */
export function engineYaml(instances: EngineYamlInstance[], opts: { urlsPort?: number; persist?: boolean } = {}) {
  const entries: Record<string, unknown> = {};
  for (const i of instances) {
    entries[i.engine.key] = {
      ApiToken: TOKEN,
      ApiPort: i.engine.statusPort,
      RunCommand: i.runCommand,
      TimeoutSeconds: i.timeoutSeconds ?? 30,
      DumpOnTimeout: false,
      Arguments: i.args ?? [],
      ...i.more,
    };
  }
  return appsettingsYaml(entries, {
    ...opts,
    // The engine leaves within 0.7 s of /shutdown when idle; a loaded 2-core machine gets room on top.
    timing: {
      ShutdownRequestSeconds: 3,
      ShutdownExitSeconds: 5,
      BackoffInitialSeconds: 0.3,
      BackoffMaxSeconds: 1,
      StableRunSeconds: 60,
      RejectedCheckinLogSeconds: 0,
    },
  });
}

/** An engine instance for engineConfig: its key, and engineYaml's fields but the prepared engine. */
export type EngineConfigInstance = Omit<EngineYamlInstance, 'engine' | 'runCommand'> & {
  key: string;
  /** Left out: the unpacked bundle's `Robust.Server`. */
  runCommand?: string;
};

/**
 * Prepares every instance in `dir` (prepareEngine) and writes their appsettings.yml (engineYaml): the yaml, the
 * prepared engines by key, and the unpacked bundle's program.
 */
export async function engineConfig(
  dir: string,
  instances: EngineConfigInstance[],
  opts: Parameters<typeof engineYaml>[1] = {},
): Promise<{ yaml: string; engines: Record<string, EngineInstance>; program: string }> {
  const { program } = await unpackedEngine();
  const engines: Record<string, EngineInstance> = {};
  const entries: EngineYamlInstance[] = [];
  for (const { key, runCommand, ...rest } of instances) {
    engines[key] = await prepareEngine(dir, key);
    entries.push({ ...rest, engine: engines[key], runCommand: runCommand ?? program });
  }
  return { yaml: engineYaml(entries, opts), engines, program };
}

/** What an engine suite's tests see besides the daemon: every engine pid seen, killed after the suite. */
export type EngineCtx<C> = C & { pids: Set<number> };

/**
 * A daemonSuite for engines. Where the engine cannot run every test is registered as skipped (the hooks never run),
 * so the closing line counts them. `after` also kills, by pid, every engine `pids` names (PersistServers leaves
 * them running when the daemon stops).
 */
export function engineSuite<C extends object>(
  name: string,
  opts: Omit<Parameters<typeof daemonSuite<EngineCtx<C>>>[1], 'ctx'> & { ctx?: C },
): Test<EngineCtx<C> & DaemonCtx> {
  if (ENGINE_SKIP) return skippedSuite(name);
  return daemonSuite<EngineCtx<C>>(name, {
    ...opts,
    ctx: { ...(opts.ctx as C), pids: new Set<number>() },
    prefix: opts.prefix ?? 'wd-engine-',
    after: async (ctx) => {
      try {
        await opts.after?.(ctx);
      } finally {
        for (const pid of ctx.pids) killGroup(pid);
      }
    },
  });
}

/** The engine's stdout and stderr as the daemon keeps them: `instances/<key>/logs/server.log`. */
export const serverLog = (dir: string, key: string) =>
  readFile(join(dir, 'instances', key, 'logs', 'server.log'), 'utf8').catch(() => '');

/** A check-in with `secret` for instance `key`, as the engine sends it; the daemon's answer status. */
export async function ping(d: RunningDaemon, key: string, secret: string): Promise<number> {
  const res = await fetch(`${d.url}/server_api/${key}/ping`, {
    method: 'POST',
    headers: { authorization: basic(key, secret) },
  });
  await res.arrayBuffer();
  return res.status;
}

/** The state letter of /proc/<pid>/stat (R, S, T, Z, …), or null once the pid is gone. */
export function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

/** Gone: no such pid, or a zombie (dead, only not reaped yet). */
export function gone(pid: number): boolean {
  const st = procState(pid);
  return st === null || st === 'Z';
}

/**
 * Packs the unpacked bundle as a server build (a tar.gz whose root is the bundle's root) plus `build.txt` naming
 * `label`, so two builds differ. gzip -1: the archive is 35 MiB unpacked and the suite has a time budget.
 */
export async function packEngineBuild(bundleDir: string, out: string, label: string): Promise<BuiltArchive> {
  const marker = join(dirname(out), `label-${label}`);
  await mkdir(marker, { recursive: true });
  await writeFile(join(marker, 'build.txt'), `${label}\n`);
  const args = ['-I', 'gzip -1', '-cf', out, '-C', bundleDir, ...(await readdir(bundleDir)), '-C', marker, 'build.txt'];
  await new Promise<void>((ok, fail) =>
    execFile('tar', args, { timeout: 120_000 }, (err, _out, stderr) =>
      err ? fail(new Error(`packing the engine build ${out} failed: ${stderr || err.message}`, { cause: err })) : ok(),
    ),
  );
  return describeArchive(out);
}

/**
 * The engine took `POST /update` and carried on: it answers a `GET /status` asked after its log showed the update
 * (from `logFrom`, a length of its server.log), and logs that request after the update. The later marker for "the
 * update did not end it", in place of a quiet spell.
 */
export async function servesAfterUpdate(dir: string, key: string, statusPort: number, logFrom: number) {
  const after = /statushost\.http: POST \/update from 127\.0\.0\.1[\s\S]*statushost\.http: GET \/status from/;
  // A Manifest update checks the manifest and downloads the 35 MB build before it tells the engine.
  await waitFor(
    `${key}: the engine told of the update`,
    async () => /statushost\.http: POST \/update from 127\.0\.0\.1/.test((await serverLog(dir, key)).slice(logFrom)),
    120_000,
    200,
  );
  const res = await fetch(`http://127.0.0.1:${statusPort}/status`, { signal: AbortSignal.timeout(30_000) });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${key}: GET /status after the update answered ${res.status}`);
  await waitFor(`${key}: a later GET /status in the engine's log`, async () =>
    after.test((await serverLog(dir, key)).slice(logFrom)),
  );
}
