import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts, WATCHDOG } from '../lib/env.ts';
import { signal } from '../lib/proc.ts';
import { sleep } from '../lib/wait.ts';
import { SECOND_DAEMON_EXIT_MS } from './config.ts';
import type { SoakContext } from './context.ts';
import { runningNow } from './faults-env.ts';
import { isLive, scanOurs } from './procscan.ts';
import { check, countFault } from './state.ts';

/** Second daemons alive now (at most one): an interrupted soak kills them with the rest. */
export const secondDaemons = new Set<number>();

/**
 * Starts a second daemon in the same folder on another port: it must exit 1 at once, never answer on its port,
 * and leave every server of the first daemon alone.
 */
export async function secondDaemon(ctx: SoakContext): Promise<void> {
  const { s } = ctx;
  const [port] = await freePorts(1);
  const before = new Map(runningNow(ctx).map((t) => [t.key, t.status?.pid ?? 0]));
  countFault(s, 'second-daemon');
  const out = openSync(join(s.dir, 'second-daemon.log'), 'a');
  const url = `http://127.0.0.1:${port}`;
  const proc = spawn(process.execPath, [WATCHDOG, 'start', '--urls', url], { cwd: s.dir, stdio: ['ignore', out, out] });
  closeSync(out);
  if (proc.pid !== undefined) secondDaemons.add(proc.pid);
  let code: number | null | undefined;
  proc.once('exit', (c) => {
    if (proc.pid !== undefined) secondDaemons.delete(proc.pid);
    code = c;
  });
  const started = Date.now();
  let answered = false;
  // Bounded: polls every 100 ms until it exits or SECOND_DAEMON_EXIT_MS pass.
  while (code === undefined && Date.now() - started < SECOND_DAEMON_EXIT_MS) {
    answered ||= await fetch(`${url}/health`, { signal: AbortSignal.timeout(500) }).then(
      () => true,
      () => false,
    );
    await sleep(100);
  }
  const tookMs = Date.now() - started;
  let leftovers = 0;
  if (code === undefined && proc.pid !== undefined) {
    // It did not refuse (a violation, below): it is stopped, and the servers it launched are ended by pid, so one
    // violation does not turn into a run of duplicates and orphans for every later check.
    const launched = scanOurs(s.run).filter((p) => p.kind === 'server' && p.parent === proc.pid);
    signal(proc.pid, 'SIGTERM');
    for (let i = 0; i < 50 && code === undefined; i++) await sleep(100);
    if (code === undefined) signal(proc.pid, 'SIGKILL');
    for (const p of launched.filter((x) => isLive(x.pid))) {
      leftovers++;
      for (const target of [-p.pid, p.pid]) signal(target, 'SIGKILL');
    }
  }
  const live = new Map(
    scanOurs(s.run)
      .filter((p) => p.kind === 'server')
      .map((p) => [p.key, p.pid]),
  );
  const disturbed = [...before].filter(([key, pid]) => {
    const t = s.tracks.get(key);
    return t !== undefined && t.touchedAt <= started && live.get(key) !== pid;
  });
  s.log(
    `fault second-daemon on port ${port}: ${code === undefined ? 'still running' : `exit ${code}`} after ${tookMs} ms` +
      `${answered ? ', answered /health' : ''}; ${disturbed.length} of the first daemon's servers disturbed` +
      `${leftovers > 0 ? `; ended ${leftovers} servers it left` : ''} (its output: second-daemon.log)`,
  );
  check(
    s,
    'second-daemon-refused',
    code === 1 && !answered && disturbed.length === 0,
    () =>
      `a second daemon in the same folder: ${code === undefined ? `still running after ${tookMs} ms` : `exit ${code} after ${tookMs} ms`}` +
      `${answered ? ', answered on its own port' : ''}; servers changed: ${disturbed.map(([k, p]) => `${k} (was ${p})`).join(', ') || 'none'}`,
  );
}
