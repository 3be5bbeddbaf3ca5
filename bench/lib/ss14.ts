/**
 * The real .NET watchdog (space-wizards/SS14.Watchdog) as a benchmark peer: built by
 * bench/peers/ss14-watchdog/build.sh (cached outside the tree), run in a temp folder of the bench's with its own
 * appsettings.yml, ready when GET /watchdog/padlock answers 200, stopped by its pid. When it cannot be built (no
 * dotnet, no snapshot), `peerExe()` says why and the sections print one line and go on without it.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { BENCH } from './env.ts';
import { isAlive, signal } from './proc.ts';
import { waitFor, wallNow } from './wait.ts';

export const PEER_NAME = 'real SS14.Watchdog';
const BUILD = join(BENCH, 'peers/ss14-watchdog/build.sh');

let cached: Promise<{ exe: string } | { skipped: string }> | null = null;

/** The runnable apphost of the real watchdog, or why there is none (built once per bench process). */
export function peerExe(): Promise<{ exe: string } | { skipped: string }> {
  cached ??= new Promise((resolve) => {
    if (process.env.BENCH_NO_PEER === '1') {
      resolve({ skipped: 'BENCH_NO_PEER=1' });
      return;
    }
    execFile('bash', [BUILD], { timeout: 10 * 60_000, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      const exe = stdout.trim().split('\n').at(-1) ?? '';
      if (err || !exe)
        resolve({
          skipped: `bench/peers/ss14-watchdog/build.sh failed: ${(stderr || String(err)).trim().split('\n').slice(-3).join(' / ')}`,
        });
      else resolve({ exe });
    });
  });
  return cached;
}

/** One line for a section that ran without the peer. */
export const skippedLine = (why: string): string => `${PEER_NAME} peer skipped (${why}).`;

export interface PeerInstance {
  key: string;
  token: string;
  apiPort: number;
  runCommand: string;
  arguments: string[];
  timeoutSeconds: number;
  env?: Record<string, string>;
  /** More lines inside the instance (`UpdateType: Manifest`, …), without their indent. */
  extra?: string[];
}

export interface PeerLogOptions {
  /** Logger namespaces logged at Verbose (the rest stays at Warning), e.g. its ServerInstance's pings and launches. */
  verbose?: string[];
}

/** appsettings.yml for the real watchdog: console log at Warning (Information logs every request), loopback Urls. */
export function peerYaml(port: number, instances: PeerInstance[], log: PeerLogOptions = {}): string {
  const overrides = (log.verbose ?? []).map((ns) => `${ns}: Verbose`).join(', ');
  const lines = [
    'Serilog:',
    '  Using: [ "Serilog.Sinks.Console" ]',
    `  MinimumLevel: { Default: Warning${overrides ? `, Override: { ${overrides} }` : ''} }`,
    '  WriteTo: [ { Name: Console } ]',
    `Urls: http://127.0.0.1:${port}`,
    'Servers:',
    '  Instances:',
  ];
  for (const i of instances) {
    lines.push(
      `    ${i.key}:`,
      `      ApiToken: ${JSON.stringify(i.token)}`,
      `      ApiPort: ${i.apiPort}`,
      `      RunCommand: ${JSON.stringify(i.runCommand)}`,
      `      TimeoutSeconds: ${i.timeoutSeconds}`,
      '      DumpOnTimeout: false',
      `      Arguments: ${JSON.stringify(i.arguments)}`,
    );
    if (i.env && Object.keys(i.env).length) lines.push(`      EnvironmentVariables: ${JSON.stringify(i.env)}`);
    for (const l of i.extra ?? []) lines.push(`      ${l}`);
  }
  return lines.join('\n') + '\n';
}

export interface Peer {
  pid: number;
  url: string;
  proc: ChildProcess;
  spawnedAt: number;
  /** Wall time of the first 200 from GET /watchdog/padlock. */
  readyAt: number;
  log(): string;
  /** Every output line so far with the wall time it reached the bench. */
  lines(): ReadonlyArray<{ line: string; at: number }>;
  /** SIGTERM (the real watchdog then stops its servers), SIGKILL after graceMs; also SIGKILLs any child left. */
  stop(graceMs?: number): Promise<void>;
}

/** GET <path> on a fresh connection; the status, or 0 on any error. */
export function getStatus(port: number, path: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Pids whose parent is `pid` (a scan of /proc; the real watchdog's servers are its direct children). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(rest[1]) === pid && rest[0] !== 'Z') out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Writes appsettings.yml into `dir` and runs the real watchdog there until /watchdog/padlock answers 200. */
export async function startPeer(
  exe: string,
  dir: string,
  port: number,
  instances: PeerInstance[],
  opts: { pollMs?: number; timeoutMs?: number; log?: PeerLogOptions } = {},
): Promise<Peer> {
  await writeFile(join(dir, 'appsettings.yml'), peerYaml(port, instances, opts.log));
  const spawnedAt = wallNow();
  const proc = spawn(exe, [], {
    cwd: dir,
    env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let partial = '';
  const timed: Array<{ line: string; at: number }> = [];
  const keep = (d: Buffer) => {
    const at = wallNow();
    const text = d.toString('utf8');
    if (out.length < 200_000) out += text;
    // Timed lines are for benches that log at Verbose on purpose; bounded all the same.
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (timed.length < 100_000) timed.push({ line, at });
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    proc.once('exit', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  const pid = proc.pid;
  if (pid === undefined) throw new Error(`could not spawn ${exe}`);
  const stop = async (graceMs = 15_000) => {
    const kids = childPids(pid);
    if (exitCode === undefined) {
      signal(pid, 'SIGTERM');
      const timer = setTimeout(() => signal(pid, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    for (const k of kids) if (isAlive(k)) signal(k, 'SIGKILL');
  };
  try {
    const readyAt = await waitFor(
      "the real watchdog's /watchdog/padlock to answer 200",
      async () => {
        if (exitCode !== undefined) throw new Error(`the real watchdog exited with ${exitCode}:\n${out.slice(-2000)}`);
        return (await getStatus(port, '/watchdog/padlock')) === 200 ? wallNow() : null;
      },
      opts.timeoutMs ?? 60_000,
      opts.pollMs ?? 5,
    );
    return { pid, url: `http://127.0.0.1:${port}`, proc, spawnedAt, readyAt, log: () => out, lines: () => timed, stop };
  } catch (err) {
    await stop(2000);
    throw err;
  }
}

/** The real watchdog's server for `key` (its child with `--cvar watchdog.key=<key>`) and that server's check-in secret. */
export function peerServer(peerPid: number, key: string): { pid: number; secret: string } | null {
  for (const pid of childPids(peerPid)) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!args.includes(`watchdog.key=${key}`)) continue;
    const env = readEnv(pid, 'ROBUST_CVAR_watchdog__token');
    return env ? { pid, secret: env } : null;
  }
  return null;
}

function readEnv(pid: number, name: string): string | null {
  try {
    for (const e of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0'))
      if (e.startsWith(`${name}=`)) return e.slice(name.length + 1);
  } catch {
    // gone
  }
  return null;
}
