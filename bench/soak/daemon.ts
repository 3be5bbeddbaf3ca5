import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, WATCHDOG } from '../lib/env.ts';
import { signal } from '../lib/proc.ts';
import { sleep } from '../lib/wait.ts';

/** One run of the real daemon (`bin/watchdog start`) in the soak folder; its output appended to daemon.log there. */
export interface SoakDaemon {
  pid: number;
  url: string;
  startedAt: number;
  exited(): boolean;
  /** Resolves with the exit code (null when killed by a signal). */
  exit: Promise<number | null>;
}

/** Every daemon spawned and not yet exited, the one still starting included: an interrupted soak kills them all. */
export const liveDaemons = new Set<number>();

/**
 * The preload that steps the daemon's wall clock (`Date` only; timers and the monotonic clock go on) by the offset in
 * the file CLOCK_STEP_FILE names, as an NTP step or `date -s` would (the clock-step fault). The daemon's servers are
 * scripts it execs: they do not take it.
 */
const CLOCK_PRELOAD = join(ROOT, 'test/fixtures/clock/step-wall-clock.mjs');

/** The file the clock-step fault writes the daemon's wall-clock offset to (ms); `<file>.<pid>` says it was taken. */
export const clockStepFile = (dir: string) => join(dir, 'clock-offset');

export async function startSoakDaemon(dir: string, port: number, timeoutMs = 30_000): Promise<SoakDaemon> {
  const log = openSync(join(dir, 'daemon.log'), 'a');
  // Its own process group is not needed (it is signalled by pid); its servers have their own groups anyway.
  const proc = spawn(process.execPath, ['--import', CLOCK_PRELOAD, WATCHDOG, 'start'], {
    cwd: dir,
    stdio: ['ignore', log, log],
    env: { ...process.env, CLOCK_STEP_FILE: clockStepFile(dir) },
  });
  closeSync(log);
  const pid = proc.pid;
  if (pid === undefined) throw new Error('could not spawn the daemon');
  liveDaemons.add(pid);
  let done = false;
  const exit = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      liveDaemons.delete(pid);
      done = true;
      resolve(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (done) throw new Error(`the daemon exited at start (see ${join(dir, 'daemon.log')})`);
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      signal(pid, 'SIGKILL');
      throw new Error(`the daemon did not answer /health within ${timeoutMs} ms`);
    }
    await sleep(50);
  }
  return { pid, url, startedAt: Date.now(), exited: () => done, exit };
}

/** SIGTERM (graceful), SIGKILL after `graceMs`; resolves with the exit code. */
export async function stopSoakDaemon(d: SoakDaemon, graceMs: number): Promise<number | null> {
  if (d.exited()) return d.exit;
  signal(d.pid, 'SIGTERM');
  const timer = setTimeout(() => signal(d.pid, 'SIGKILL'), graceMs);
  const code = await d.exit;
  clearTimeout(timer);
  return code;
}

/** SIGKILL, as a crash or the OOM killer would; resolves once it is gone. */
export async function killSoakDaemon(d: SoakDaemon): Promise<void> {
  signal(d.pid, 'SIGKILL');
  await d.exit;
}
