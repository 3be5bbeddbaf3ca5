import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite, type Test } from 'uvu';
import type { Health } from '../../src/http/schemas.ts';
import type { HubStatus, RestoreStatus } from '../../src/supervisor/status.ts';
import { freePort, ROOT, tempDir, waitFor } from './env.ts';
import { pollRequest, rawRequest } from './http-request.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook.ts';

export interface RunningDaemon {
  dir: string;
  url: string;
  proc: ChildProcess;
  /** Everything the daemon wrote to stderr (its log) so far. */
  log(): string;
  /** Signals the daemon (SIGTERM unless said) and waits for its exit code; SIGKILL after `graceMs`. */
  stop(graceMs?: number, signal?: NodeJS.Signals): Promise<number | null>;
  /** Removes the temp folder. */
  cleanup(): Promise<void>;
  status(key: string, token: string): Promise<StatusJson>;
  control(key: string, token: string, action: string): Promise<number>;
}

export interface StatusJson {
  key: string;
  state: string;
  pid: number | null;
  revision: string | null;
  lastCheckinAt: string | null;
  startupFailures: number;
  restarts: number;
  updatePending: boolean;
  stopRequested: boolean;
  restore?: RestoreStatus | null;
  hub?: HubStatus;
}

export const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

/** Starts the real daemon (`bin/watchdog start`) in a fresh temp folder with the given appsettings.yml text. */
export async function startDaemon(
  yaml: string,
  opts: {
    env?: Record<string, string>;
    dir?: string;
    files?: Record<string, string>;
    /** A command the daemon runs under, which execs it (`['prlimit', '--nofile=128:128', '--']`). */
    wrap?: string[];
    /** More arguments for `watchdog start` (`['--inspect']`). */
    args?: string[];
  } = {},
): Promise<RunningDaemon> {
  const tmp = opts.dir ? { path: opts.dir, cleanup: async () => {} } : await tempDir('wd-e2e-');
  for (const [name, text] of Object.entries(opts.files ?? {})) await writeFile(join(tmp.path, name), text);
  // The daemon's own port from freePort too, not the kernel's pick at bind time: that pick could be a port freePort
  // handed to one of its instances a moment ago (seen: the instance's launch refused as the daemon's own port).
  const anyPort = /^Urls: http:\/\/127\.0\.0\.1:0$/m;
  // A port of ours taken by another process between the pick and the bind is picked again (twice at most).
  for (let attempt = 1; ; attempt++) {
    const config = anyPort.test(yaml) ? yaml.replace(anyPort, `Urls: http://127.0.0.1:${await freePort()}`) : yaml;
    await writeFile(join(tmp.path, 'appsettings.yml'), config);
    try {
      return await launchDaemon(tmp, opts);
    } catch (err) {
      const retry = err instanceof DaemonExit && /EADDRINUSE/.test(err.output) && anyPort.test(yaml) && attempt < 3;
      if (!retry) {
        await tmp.cleanup();
        throw err;
      }
    }
  }
}

class DaemonExit extends Error {
  constructor(
    code: number | null,
    readonly output: string,
  ) {
    super(`daemon exited with ${code} before it listened:\n${output}`);
  }
}

/** Spawns the daemon in `tmp` (its appsettings.yml written) and waits until it listens, or fails as soon as it exits. */
async function launchDaemon(
  tmp: { path: string; cleanup: () => Promise<void> },
  opts: { env?: Record<string, string>; wrap?: string[]; args?: string[] },
): Promise<RunningDaemon> {
  const argv = [process.execPath, join(ROOT, 'bin/watchdog'), 'start', '--log-level', 'debug', ...(opts.args ?? [])];
  const [command = process.execPath, ...args] = [...(opts.wrap ?? []), ...argv];
  const proc = spawn(command, args, {
    cwd: tmp.path,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((c) => (exitCode = c));
  // 'close' comes after the output is read to its end: the error then says why.
  let closed: DaemonExit | undefined;
  proc.once('close', (code) => (closed = new DaemonExit(code, out)));

  let url: string;
  try {
    // A deadline, not a pace: a passing start takes a fraction of it even on a busy machine.
    const found = await waitFor(
      'the daemon to listen',
      () => /\[watchdog\] listening on (http:\/\/\S+)/.exec(out)?.[1] ?? closed,
      30_000,
    );
    if (found instanceof DaemonExit) throw found;
    url = found;
    // It listens before it has registered its instances (their servers need its address); until then it answers
    // the list with 503 and /health says `starting`. A daemon that exits meanwhile is the test's to see.
    await waitFor(
      'the daemon to register its instances',
      async () => closed ?? (JSON.parse((await rawRequest(new URL('/health', url))).body) as Health).starting !== true,
      30_000,
    );
  } catch (err) {
    // A daemon left running would keep the test's process (and its servers) alive past the file's end.
    proc.kill('SIGKILL');
    await exited;
    throw err;
  }

  return {
    dir: tmp.path,
    url,
    proc,
    log: () => out,
    async stop(graceMs = 20_000, signal: NodeJS.Signals = 'SIGTERM') {
      if (exitCode !== undefined) return exitCode;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    cleanup: tmp.cleanup,
    async status(key, token) {
      const res = await pollRequest(new URL(`/instances/${key}/status`, url), {
        headers: { authorization: basic(key, token) },
      });
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      return JSON.parse(res.body) as StatusJson;
    },
    async control(key, token, action) {
      const res = await pollRequest(new URL(`/instances/${key}/${action}`, url), {
        method: 'POST',
        headers: { authorization: basic(key, token) },
      });
      return res.status;
    },
  };
}

/** A hook that prints its error before failing: uvu reports a failed hook only as a suite that ran nothing. */
export function reported<C>(fn: (ctx: C) => unknown): (ctx: C) => Promise<void> {
  return async (ctx) => {
    try {
      await fn(ctx);
    } catch (err) {
      console.error(err);
      throw err;
    }
  };
}

/**
 * Polls an instance's status until it is in `state` (for `running`: with a pid, and not `notPid` when given — a
 * relaunch); returns that status.
 */
export function waitState(
  d: RunningDaemon,
  key: string,
  token: string,
  state: string,
  opts: { notPid?: number | null; timeoutMs?: number } = {},
): Promise<StatusJson> {
  return waitFor(
    `${key} ${state}${opts.notPid === undefined ? '' : ` (pid not ${opts.notPid})`}`,
    async () => {
      const s = await d.status(key, token);
      if (s.state !== state || s.pid === opts.notPid) return undefined;
      return state !== 'server.running' || s.pid !== null ? s : undefined;
    },
    opts.timeoutMs ?? 15_000,
  );
}

/** What every test of a daemonSuite sees: the daemon's folder, the daemon, and the chat-webhook receiver if asked. */
export interface DaemonCtx {
  dir: string;
  daemon?: RunningDaemon;
  hook?: WebhookReceiver;
}

/**
 * A uvu suite whose tests share one real daemon, started in `before` in a fresh temp folder (`ctx.dir`) and stopped,
 * with the folder removed, in `after`. `config` gives its appsettings.yml; the folder exists then (write files the
 * daemon should find there), and so does `ctx.hook` with `webhook: true`. `before` runs once the daemon listens;
 * `stopping` while it is still up; `after` once it has exited.
 */
export function daemonSuite<C extends object = Record<never, never>>(
  name: string,
  opts: {
    ctx?: C;
    prefix?: string;
    webhook?: boolean;
    env?: Record<string, string>;
    config: (ctx: C & DaemonCtx) => string | Promise<string>;
    before?: (ctx: C & DaemonCtx) => unknown;
    stopping?: (ctx: C & DaemonCtx) => unknown;
    after?: (ctx: C & DaemonCtx) => unknown;
  },
): Test<C & DaemonCtx> {
  const s = suite<C & DaemonCtx>(name, { ...(opts.ctx as C), dir: '' });
  let cleanup: (() => Promise<void>) | undefined;
  s.before(
    reported(async (ctx: C & DaemonCtx) => {
      const tmp = await tempDir(opts.prefix ?? 'wd-e2e-');
      ctx.dir = tmp.path;
      cleanup = tmp.cleanup;
      if (opts.webhook) ctx.hook = await startWebhookReceiver();
      ctx.daemon = await startDaemon(await opts.config(ctx), { dir: ctx.dir, env: opts.env });
      await opts.before?.(ctx);
    }),
  );
  s.after(async (ctx) => {
    try {
      await opts.stopping?.(ctx);
    } finally {
      await ctx.daemon?.stop();
      try {
        await opts.after?.(ctx);
      } finally {
        await cleanup?.();
        await ctx.hook?.close();
      }
    }
  });
  return s;
}

/** What `withDaemons` lends a test: its folder, the webhook receiver if asked for, and a way to start daemons there. */
export interface DaemonScratch {
  dir: string;
  hook?: WebhookReceiver;
  start(yaml: string, env?: Record<string, string>): Promise<RunningDaemon>;
}

/**
 * Runs `fn` with a fresh temp folder (and a chat-webhook receiver with `webhook: true`) in which it may start
 * daemons; afterwards, however `fn` ended, every daemon is stopped, the receiver closed and the folder removed.
 */
export async function withDaemons(
  opts: { prefix?: string; webhook?: boolean },
  fn: (s: DaemonScratch) => Promise<void>,
): Promise<void> {
  const tmp = await tempDir(opts.prefix ?? 'wd-e2e-');
  const daemons: RunningDaemon[] = [];
  let hook: WebhookReceiver | undefined;
  try {
    if (opts.webhook) hook = await startWebhookReceiver();
    await fn({
      dir: tmp.path,
      hook,
      async start(yaml, env) {
        const d = await startDaemon(yaml, { dir: tmp.path, env });
        daemons.push(d);
        return d;
      },
    });
  } finally {
    for (const d of daemons) await d.stop();
    await hook?.close();
    await tmp.cleanup();
  }
}

/** Stops `daemon` (if any), then releases the rest in order, even when stopping fails: for a suite's `after`. */
export async function stopThenRelease(
  daemon: RunningDaemon | null,
  release: Array<() => unknown | Promise<unknown>>,
): Promise<void> {
  try {
    await daemon?.stop();
  } finally {
    for (const r of release) await r();
  }
}
