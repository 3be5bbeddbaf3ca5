import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WATCHDOG } from './env.ts';
import { signal } from './proc.ts';
import { waitFor, wallNow } from './wait.ts';

/** The real daemon (`bin/watchdog start`) in a folder of the bench's, its log kept in memory. */
export interface BenchDaemon {
  pid: number;
  url: string;
  dir: string;
  proc: ChildProcess;
  /** Wall time (timeOrigin + now) just before the spawn. */
  spawnedAt: number;
  log(): string;
  /** Every log line so far with the wall time it reached the bench. */
  lines(): ReadonlyArray<{ line: string; at: number }>;
  /** Resolves with the first log line matching `re` that arrives after this call, and the wall time it arrived. */
  waitForLine(re: RegExp, timeoutMs: number): Promise<{ line: string; at: number }>;
  /** SIGTERM (graceful: the daemon shuts its servers down), SIGKILL after `graceMs`. Resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
  exited(): boolean;
}

export interface DaemonOptions {
  /** Node flags before bin/watchdog (`--cpu-prof`, `--import` of an instrument). */
  nodeArgs?: string[];
  env?: Record<string, string>;
  /** Seconds to wait for `listening on`. */
  startTimeoutMs?: number;
  logLevel?: string;
  /** Another checkout's bin/watchdog (bench/tools/launch-gap.ts compares builds); this checkout's by default. */
  program?: string;
}

export async function startDaemon(dir: string, yaml: string, opts: DaemonOptions = {}): Promise<BenchDaemon> {
  await writeFile(join(dir, 'appsettings.yml'), yaml);
  const args = [
    ...(opts.nodeArgs ?? []),
    opts.program ?? WATCHDOG,
    'start',
    ...(opts.logLevel ? ['--log-level', opts.logLevel] : []),
  ];
  const spawnedAt = wallNow();
  const proc = spawn(process.execPath, args, {
    cwd: dir,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let partial = '';
  const timed: Array<{ line: string; at: number }> = [];
  const watchers = new Set<{ re: RegExp; resolve: (v: { line: string; at: number }) => void }>();
  const onData = (d: Buffer) => {
    const at = wallNow();
    const text = partial + d.toString('utf8');
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      // The whole log is kept for post-run checks; the scale bench logs a few thousand lines at most.
      out += line + '\n';
      timed.push({ line, at });
      for (const w of watchers) {
        if (w.re.test(line)) {
          watchers.delete(w);
          w.resolve({ line, at });
        }
      }
    }
  };
  proc.stdout?.on('data', onData);
  proc.stderr?.on('data', onData);
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  const pid = proc.pid;
  if (pid === undefined) throw new Error('could not spawn the daemon (bin/watchdog start)');

  const daemon: BenchDaemon = {
    pid,
    url: '',
    dir,
    proc,
    spawnedAt,
    log: () => out,
    lines: () => timed,
    waitForLine(re, timeoutMs) {
      return new Promise((resolve, reject) => {
        const w = {
          re,
          resolve: (v: { line: string; at: number }) => {
            clearTimeout(timer);
            resolve(v);
          },
        };
        const timer = setTimeout(() => {
          watchers.delete(w);
          reject(new Error(`no daemon log line matching ${re} within ${timeoutMs} ms`));
        }, timeoutMs);
        watchers.add(w);
      });
    },
    async stop(graceMs = 20_000) {
      if (exitCode !== undefined) return exitCode;
      signal(pid, 'SIGTERM');
      const timer = setTimeout(() => signal(pid, 'SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    exited: () => exitCode !== undefined,
  };
  try {
    daemon.url = await waitFor(
      'the daemon to listen',
      () => {
        if (exitCode !== undefined) throw new Error(`daemon exited with ${exitCode}:\n${out.slice(-2000)}`);
        return /listening on (http:\/\/\S+)/.exec(out)?.[1];
      },
      opts.startTimeoutMs ?? 30_000,
      5,
    );
  } catch (err) {
    await daemon.stop(2000);
    throw err;
  }
  return daemon;
}

export const basic = (user: string, pass: string): string =>
  `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

export interface InstanceStatus {
  key: string;
  state: string;
  pid: number | null;
  revision: string | null;
  lastCheckinAt: string | null;
  restarts: number;
}

export async function instanceStatus(url: string, key: string, token: string): Promise<InstanceStatus> {
  const res = await fetch(`${url}/instances/${key}/status`, {
    headers: { authorization: basic(key, token) },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`GET /instances/${key}/status answered ${res.status}`);
  return (await res.json()) as InstanceStatus;
}

export async function control(url: string, key: string, token: string, action: string): Promise<number> {
  const res = await fetch(`${url}/instances/${key}/${action}`, {
    method: 'POST',
    headers: { authorization: basic(key, token) },
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** `/health`'s instance states, keyed by instance. */
export async function healthStates(url: string): Promise<Record<string, string>> {
  const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET /health answered ${res.status}`);
  return ((await res.json()) as { instances: Record<string, string> }).instances;
}

/**
 * True when the instance folder `<dir>/instances/<key>` holds no displaced build (`.update/old-*`): the daemon
 * removes the build an update pushed out of bin.prev in the background after the launch, and a timed run that
 * overlapped that removal would pay for the run before it.
 */
export async function displacedBuildsGone(dir: string, key: string): Promise<boolean> {
  const left = await readdir(join(dir, 'instances', key, '.update')).catch(() => []);
  return !left.some((n) => n.startsWith('old-'));
}
