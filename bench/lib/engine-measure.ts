/**
 * The measurements of bench/engine.ts, taken the same way for both watchdogs: the bench sends the signal or the
 * request, watches the pid in /proc and polls the engine's own status port; only the check-in comes from each
 * watchdog. Subjects alternate which goes first; every wait is bounded.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineSubject } from './engine-subjects.ts';
import { isAlive, readState, signal } from './proc.ts';
import { getStatus } from './ss14.ts';
import { sleep, waitFor, wallNow } from './wait.ts';

export interface Samples {
  ours: number[];
  theirs: number[];
}

const samples = (): Samples => ({ ours: [], theirs: [] });

/** Rounds alternate the order, so a load drift hits both alike. */
const order = <T>(pair: readonly [T, T], round: number): T[] => (round % 2 ? [pair[1], pair[0]] : [pair[0], pair[1]]);

/** The engine's pid once it runs, has checked in at or after `since` and its status port answers. */
async function ready(s: EngineSubject, since: number, timeoutMs = 90_000): Promise<number> {
  return waitFor(
    `${s.name}: an engine that has checked in and answers GET /status`,
    async () => {
      const pid = await s.enginePid();
      const checkin = pid === null ? null : await s.lastCheckin();
      if (pid === null || checkin === null || checkin < since) return null;
      return (await getStatus(s.statusPort, '/status')) === 200 ? pid : null;
    },
    timeoutMs,
    100,
  );
}

const gone = (pid: number, timeoutMs: number, everyMs: number): Promise<number> =>
  waitFor(`pid ${pid} to be gone`, () => (isAlive(pid) ? null : wallNow()), timeoutMs, everyMs);

/** Crash → relaunch: SIGKILL of a ready engine; ms to the launch line, the status port answering, the check-in. */
export async function measureCrash(
  ours: EngineSubject,
  real: EngineSubject,
  rounds: number,
): Promise<{ launch: Samples; status: Samples; checkin: Samples }> {
  const out = { launch: samples(), status: samples(), checkin: samples() };
  const since = new Map<EngineSubject, number>([
    [ours, 0],
    [real, 0],
  ]);
  for (let r = 0; r < rounds; r++) {
    for (const s of order([ours, real], r)) {
      const pid = await ready(s, since.get(s) ?? 0);
      await sleep(300);
      const t0 = wallNow();
      signal(pid, 'SIGKILL');
      since.set(s, t0);
      await gone(pid, 10_000, 5);
      // The killed pid is gone, so a 200 now comes from the new engine.
      const up = await waitFor(
        `${s.name}: the relaunched engine's status port`,
        async () => ((await getStatus(s.statusPort, '/status')) === 200 ? wallNow() : null),
        60_000,
        25,
      );
      const checkin = await waitFor(
        `${s.name}: the relaunched engine's check-in`,
        async () => {
          const c = await s.lastCheckin();
          return c !== null && c > t0 ? c : null;
        },
        60_000,
        100,
      );
      const launched = s.launchedAfter(t0);
      if (launched === null) throw new Error(`${s.name}: no launch line after the crash at ${t0}`);
      const side = s === ours ? 'ours' : 'theirs';
      out.launch[side].push(launched - t0);
      out.status[side].push(up - t0);
      out.checkin[side].push(checkin - t0);
    }
  }
  return out;
}

/** Hangs: both engines SIGSTOPped at once; ms from the last check-in each watchdog took to the pid being gone. */
export async function measureHangs(ours: EngineSubject, real: EngineSubject, hangs: number): Promise<Samples> {
  const out = samples();
  const both = [ours, real] as const;
  const since = [0, 0];
  const stopped: number[] = [];
  try {
    for (let h = 0; h < hangs; h++) {
      const pids = await Promise.all(both.map((s, i) => ready(s, since[i] ?? 0)));
      await sleep(300);
      stopped.push(...pids);
      for (const pid of pids) signal(pid, 'SIGSTOP');
      // A stopped engine sends nothing more: after a second, the last check-in taken is the one before the stop.
      await sleep(1000);
      const last = await Promise.all(both.map((s) => s.lastCheckin()));
      const killed = await Promise.all(pids.map((pid) => gone(pid, 180_000, 20)));
      both.forEach((s, i) => {
        const l = last[i];
        if (l === null || l === undefined) throw new Error(`${s.name}: no check-in before the hang`);
        (s === ours ? out.ours : out.theirs).push((killed[i] as number) - l);
        since[i] = killed[i] as number;
      });
    }
  } finally {
    // A watchdog that failed to kill would leave a stopped engine that ignores its SIGTERM.
    for (const pid of stopped) if (readState(pid) === 'T') signal(pid, 'SIGKILL');
  }
  return out;
}

/** Polls GET /status every 20 ms: the start of the first failing poll and of the next one answering 200. */
async function statusGap(port: number, timeoutMs: number): Promise<{ down: number; up: number }> {
  const deadline = Date.now() + timeoutMs;
  let down: number | null = null;
  while (Date.now() < deadline) {
    const at = wallNow();
    const ok = (await getStatus(port, '/status')) === 200;
    if (!ok && down === null) down = at;
    if (ok && down !== null) return { down, up: at };
    await sleep(20);
  }
  throw new Error(`the status port ${port} did not go down and come back within ${timeoutMs} ms`);
}

async function expect200(s: EngineSubject, action: 'restart' | 'update'): Promise<void> {
  const code = await s.control(action);
  if (code !== 200) throw new Error(`${s.name}: POST /instances/<key>/${action} answered ${code}`);
}

async function runningBuild(s: EngineSubject): Promise<string> {
  return (await readFile(join(s.instanceDir, 'bin', 'build.txt'), 'utf8').catch(() => '')).trim();
}

/**
 * Downtime of a restart and of an update completed by a restart (the engine never leaves on /update): ms from the
 * status port's first failed poll to its first answer again. `first` names the build each installed at start.
 */
export async function measureDowntime(
  ours: EngineSubject,
  real: EngineSubject,
  rounds: number,
  publish: (who: 'ours' | 'real') => Promise<string>,
  first: { ours: string; real: string },
): Promise<{ restart: Samples; update: Samples; restartLaunch: Samples; updateLaunch: Samples }> {
  const out = { restart: samples(), update: samples(), restartLaunch: samples(), updateLaunch: samples() };
  const who = (s: EngineSubject) => (s === ours ? 'ours' : 'real');
  const since = new Map<EngineSubject, number>();
  for (const s of [ours, real]) {
    // The first start installs the first build (a fresh instance), then launches it.
    since.set(s, 0);
    await ready(s, 0, 180_000);
    const build = await runningBuild(s);
    if (build !== first[who(s)]) throw new Error(`${s.name}: bin/build.txt says "${build}", not ${first[who(s)]}`);
  }
  for (let r = 0; r < rounds; r++) {
    for (const s of order([ours, real], r)) {
      for (const kind of order(['restart', 'update'] as const, r)) {
        await ready(s, since.get(s) ?? 0);
        let key: string | null = null;
        if (kind === 'update') {
          const t = wallNow();
          key = await publish(who(s));
          await expect200(s, 'update');
          await s.updateNoticed(key, t, 120_000);
        }
        const old = await s.enginePid();
        const gap = statusGap(s.statusPort, 120_000);
        await expect200(s, 'restart');
        const { down, up } = await gap;
        since.set(s, down);
        const pid = await ready(s, down);
        if (pid === old) throw new Error(`${s.name}: the engine (${pid}) was not relaunched by the restart`);
        if (key !== null && (await runningBuild(s)) !== key)
          throw new Error(`${s.name}: after the update bin/build.txt does not name ${key}`);
        const launched = s.launchedAfter(down);
        if (launched === null) throw new Error(`${s.name}: no launch line after the ${kind}`);
        const side = s === ours ? 'ours' : 'theirs';
        out[kind][side].push(up - down);
        out[kind === 'restart' ? 'restartLaunch' : 'updateLaunch'][side].push(launched - down);
      }
    }
  }
  return out;
}
