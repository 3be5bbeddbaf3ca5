import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, tempDir, waitFor } from './env.ts';

export interface RunningDaemon {
  dir: string;
  url: string;
  proc: ChildProcess;
  /** Everything the daemon wrote to stderr (its log) so far. */
  log(): string;
  /** SIGTERM, then wait for the exit code (SIGKILL after `graceMs`). */
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
}

export const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

/** Starts the real daemon (`bin/watchdog start`) in a fresh temp folder with the given appsettings.yml text. */
export async function startDaemon(
  yaml: string,
  opts: { env?: Record<string, string>; dir?: string; files?: Record<string, string> } = {},
): Promise<RunningDaemon> {
  const tmp = opts.dir ? { path: opts.dir, cleanup: async () => {} } : await tempDir('wd-e2e-');
  await writeFile(join(tmp.path, 'appsettings.yml'), yaml);
  for (const [name, text] of Object.entries(opts.files ?? {})) await writeFile(join(tmp.path, name), text);
  const proc = spawn(process.execPath, [join(ROOT, 'bin/watchdog'), 'start', '--log-level', 'debug'], {
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

  const url = await waitFor(
    'the daemon to listen',
    () => {
      if (exitCode !== undefined) throw new Error(`daemon exited with ${exitCode}:\n${out}`);
      return /\[watchdog\] listening on (http:\/\/\S+)/.exec(out)?.[1];
    },
    15_000,
  );

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
      const res = await fetch(`${url}/instances/${key}/status`, { headers: { authorization: basic(key, token) } });
      if (!res.ok) throw new Error(`status ${res.status}`);
      return (await res.json()) as StatusJson;
    },
    async control(key, token, action) {
      const res = await fetch(`${url}/instances/${key}/${action}`, {
        method: 'POST',
        headers: { authorization: basic(key, token) },
      });
      await res.arrayBuffer();
      return res.status;
    },
  };
}
