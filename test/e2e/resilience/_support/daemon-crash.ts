/**
 * Helpers shared by the resilience and fault-injection e2e suites (not a suite itself: no `.test.ts`).
 * Everything here drives the real daemon (`bin/watchdog start`) and real processes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isAlive, readProcessStartTime } from '../../../../src/process/proc-info.ts';
import type { RunningDaemon, StatusJson } from '../../../_support/daemon.ts';
import { waitFor } from '../../../_support/env.ts';

export { killGroup } from '../../../_support/procs.ts';
export { isAlive, readProcessStartTime };

/** Pins `Urls` to a fixed port: servers left running check in to the address they were launched with. */
export function fixedUrls(yaml: string, port: number): string {
  return yaml.replace(/^Urls: .*$/m, `Urls: http://127.0.0.1:${port}`);
}

/** The status route, with a deadline (5 s): a request that never answers must fail a wait, not stall the run. */
export const statusOf = (d: RunningDaemon, key: string, token: string): Promise<StatusJson> => d.status(key, token);

/** Polls the status route until `pred` holds; returns that status. */
export function waitStatus(
  d: RunningDaemon,
  key: string,
  token: string,
  what: string,
  pred: (s: StatusJson) => boolean,
  timeoutMs = 15_000,
): Promise<StatusJson> {
  return waitFor(
    `${key}: ${what}`,
    async () => {
      const s = await statusOf(d, key, token);
      return pred(s) ? s : undefined;
    },
    timeoutMs,
    100,
  ).catch((err: unknown) => {
    // What the daemon did meanwhile is the report: a status poll alone cannot say why it never got there.
    const tail = d.log().split('\n').slice(-40).join('\n');
    throw new Error(`${(err as Error).message}\n--- the daemon's last lines ---\n${tail}`, { cause: err });
  });
}

export const running = (s: StatusJson) => s.state === 'server.running' && s.pid !== null;

/** SIGKILLs the daemon (a crash: nothing of its shutdown runs) and waits for it to be gone. */
export async function crash(d: RunningDaemon): Promise<void> {
  const gone = new Promise<void>((r) =>
    d.proc.exitCode !== null || d.proc.signalCode !== null ? r() : d.proc.once('exit', () => r()),
  );
  d.proc.kill('SIGKILL');
  await gone;
}

/** Pids of live processes whose command line contains `needle` (e.g. an instance's config.toml path). */
export async function pidsWith(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(needle) && isAlive(Number(name))) found.push(Number(name));
  }
  return found;
}

/** The check-in secret a server was launched with (from its environment). */
export async function launchSecret(pid: number): Promise<string | undefined> {
  const env = await readFile(`/proc/${pid}/environ`, 'utf8');
  return env
    .split('\0')
    .find((e) => e.startsWith('ROBUST_CVAR_watchdog__token='))
    ?.slice('ROBUST_CVAR_watchdog__token='.length);
}

/** Starts `sleep` (a process this test owns, unrelated to any daemon) and returns it with its pid. */
export function startSleep(seconds = 120): { proc: ChildProcess; pid: number } {
  const proc = spawn('sleep', [String(seconds)], { stdio: 'ignore' });
  if (proc.pid === undefined) throw new Error('could not start sleep');
  return { proc, pid: proc.pid };
}

/** A data.json whose launch record names `pid` with a start time it does not have (a reused pid). */
export function bogusLaunchRecord(pid: number, instanceDir: string): string {
  return JSON.stringify({
    version: 1,
    updateType: null,
    revision: null,
    previousRevision: null,
    launch: {
      pid,
      startTime: '1@00000000-0000-0000-0000-000000000000',
      program: '/bin/sleep',
      args: ['--config-file', `${instanceDir}/config.toml`],
      secret: 'c2VjcmV0',
      launchedAt: new Date(0).toISOString(),
    },
  });
}

/** Lines of the daemon log matching `re`, in order. */
export function logLines(d: RunningDaemon, re: RegExp): string[] {
  return d
    .log()
    .split('\n')
    .filter((l) => re.test(l));
}

/** A pause of the test's own pacing (a fixture's rhythm); never a wait for something to happen. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Until `key` has had a check-in accepted later than `fromMs + timeoutSeconds`, returning that status. Take `fromMs`
 * once the server is seen running under `d` (its check-in timeout is armed by then): a server whose check-ins were
 * refused (or never reached the daemon) would have been killed as hung by then, so this is "its check-ins keep it
 * running for longer than a whole TimeoutSeconds", as a fact rather than a pause.
 */
export function checkedInPastTimeout(
  d: RunningDaemon,
  key: string,
  token: string,
  fromMs: number,
  timeoutSeconds: number,
  deadlineMs = timeoutSeconds * 1000 + 20_000,
): Promise<StatusJson> {
  const past = fromMs + timeoutSeconds * 1000 + 500;
  return waitStatus(
    d,
    key,
    token,
    `a check-in accepted past TimeoutSeconds (after ${new Date(past).toISOString()})`,
    (s) => s.lastCheckinAt !== null && Date.parse(s.lastCheckinAt) > past,
    deadlineMs,
  );
}

/**
 * Until a server writing its own log to `file` has tried to check in with no daemon there: a `Failed to send ping
 * to watchdog` line (test/fixtures/servers/_lib.mjs) after byte `from`. Take `from` once the daemon is gone: the
 * line then says the server outlived the daemon and goes on, where a pause would only say it had not died yet.
 */
export async function pingFailedSince(file: string, from: number, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    `a failed check-in in ${file} (the server runs on without its daemon)`,
    async () => /Failed to send ping to watchdog/.test((await readFile(file)).subarray(from).toString('utf8')),
    timeoutMs,
    50,
  );
}

/** The size of `file` now (0 when it does not exist): where `pingFailedSince` starts reading. */
export const sizeOf = (file: string): Promise<number> =>
  stat(file).then(
    (s) => s.size,
    () => 0,
  );

/**
 * Starts an instance's server with the real watchdog's arguments (then the instance's port and check-in interval)
 * and `env` on top of ours, detached like one it left behind; resolves with its pid once it answers on `port`. The pid
 * goes into `servers` at once, so a test's cleanup kills it even when the wait fails.
 */
export async function startLeftServer(opts: {
  program: string;
  key: string;
  dir: string;
  baseUrl: string;
  port: number;
  env: Record<string, string>;
  servers: Set<number>;
}): Promise<number> {
  await mkdir(join(opts.dir, 'data'), { recursive: true });
  const args = [
    ...['--cvar', `watchdog.key=${opts.key}`, '--cvar', `watchdog.baseUrl=${opts.baseUrl}`],
    ...['--config-file', join(opts.dir, 'config.toml'), '--data-dir', join(opts.dir, 'data')],
    ...['--cvar', `net.port=${opts.port}`, '--cvar', 'watchdog.checkin_interval=0.3'],
  ];
  const proc = spawn(opts.program, args, {
    cwd: opts.dir,
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, ...opts.env },
  });
  proc.unref();
  const pid = proc.pid;
  if (pid === undefined) throw new Error('could not start the old server');
  opts.servers.add(pid);
  await waitFor(
    'the old server to answer on its port',
    async () => (await fetch(`http://127.0.0.1:${opts.port}/status`)).ok,
    10_000,
    50,
  );
  return pid;
}
