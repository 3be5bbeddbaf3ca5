import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { MaintenanceStatus } from '../../../src/supervisor/status.ts';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite, type RunningDaemon, type StatusJson, waitState } from '../../_support/daemon.ts';
import { freePort, ROOT, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { logLines } from '../resilience/_support/daemon-crash.ts';

/**
 * The wall clock steps (an NTP step, a VM resume, `date -s`) while servers run: the daemon and its servers see
 * `Date` move an hour forward, then back (test/fixtures/clock/step-wall-clock.mjs, preloaded through NODE_OPTIONS),
 * while their timers and monotonic clock go on. A healthy server checking in is never taken for hung, a server that
 * stops checking in after the step is still killed as hung, a maintenance schedule fires at its wall-clock time, and a
 * hold runs its length, shown as it was set, whichever way the clock steps meanwhile.
 */
const TOKEN = 'tok';
const HOUR = 3_600_000;
/**
 * TimeoutSeconds of `steady` and `hung`: a check-in held back by a step would get the healthy one killed this long
 * after, and the one told to hang is killed this long after its last check-in. Room for a start on a loaded machine.
 */
const TIMEOUT_S = 8;
const PRELOAD = join(ROOT, 'test/fixtures/clock/step-wall-clock.mjs');

interface Ctx {
  /** Where the offset is written; the daemon and its servers read it. */
  stepFile: string;
  /** Made to tell the `hung` instance's server to stop checking in. */
  hangFile: string;
  /** The wall-clock time (as the daemon reads it after the +1 h step) the `sched` instance's schedule names. */
  schedAt: number;
  /** The offset applied now: the daemon's clock reads the test's plus this. */
  offset: number;
}
type Run = Ctx & { daemon?: RunningDaemon };
type Status = StatusJson & { maintenance: MaintenanceStatus };

// NODE_OPTIONS and CLOCK_STEP_FILE, the latter set once the suite's folder exists (before the daemon starts).
const env: Record<string, string> = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${PRELOAD}`.trim() };

/** A 6-field schedule that fires once, at `at` (UTC, whole seconds). */
const onceAt = (at: number) => {
  const d = new Date(at);
  return `${d.getUTCSeconds()} ${d.getUTCMinutes()} ${d.getUTCHours()} ${d.getUTCDate()} ${d.getUTCMonth() + 1} *`;
};

const test = daemonSuite<Ctx>('e2e :: faults: the wall clock steps an hour forward and back', {
  prefix: 'wd-clock-',
  ctx: { stepFile: '', hangFile: '', schedAt: 0, offset: 0 },
  env,
  async config(ctx) {
    ctx.stepFile = join(ctx.dir, 'clock-offset');
    ctx.hangFile = join(ctx.dir, 'hang-now');
    env.CLOCK_STEP_FILE = ctx.stepFile;
    // Far enough ahead for the daemon and its servers to start before the step brings it near.
    ctx.schedAt = Math.ceil((Date.now() + HOUR + 60_000) / 1000) * 1000;
    return testConfig({
      instances: [
        { key: 'steady', port: await freePort(), runCommand: fixture('log-starts.mjs'), timeoutSeconds: TIMEOUT_S },
        // Checks in until told to hang (hangFile), then stays alive and silent.
        {
          key: 'hung',
          port: await freePort(),
          runCommand: fixture('hang.mjs'),
          timeoutSeconds: TIMEOUT_S,
          extra: `      EnvironmentVariables: { HANG_FILE: ${JSON.stringify(ctx.hangFile)} }`,
        },
        {
          key: 'sched',
          port: await freePort(),
          runCommand: fixture('log-starts.mjs'),
          extra: [
            '      Maintenance:',
            `        RestartSchedule: "${onceAt(ctx.schedAt)}"`,
            '        TimeZone: UTC',
            '        When: Now',
          ].join('\n'),
        },
      ],
    });
  },
  async before(ctx) {
    const d = ctx.daemon!;
    const up = (key: string) => waitState(d, key, TOKEN, 'server.running', { timeoutMs: 30_000 });
    await Promise.all(['steady', 'hung', 'sched'].map(up));
  },
});

/** Sets the clock offset of the daemon and its servers, and waits until the daemon has applied it. */
async function step(ctx: Run, offset: number): Promise<void> {
  await writeFile(ctx.stepFile, String(offset));
  const ack = `${ctx.stepFile}.${ctx.daemon!.proc.pid}`;
  await waitFor(`the daemon to read the clock ${offset / HOUR} h off`, async () => {
    return (await readFile(ack, 'utf8').catch(() => '')) === String(offset);
  });
  ctx.offset = offset;
}

const stops = (d: RunningDaemon, key: string) =>
  logLines(d, new RegExp(`\\[watchdog:${key}\\] state server\\.stopping`));

/**
 * The healthy server through a step: a check-in stamped after it (by the daemon's stepped clock), then one more than
 * a whole TimeoutSeconds later, by the same server with no stop. A check-in held back by the step would instead have
 * it killed as hung within that TimeoutSeconds.
 */
async function survives(ctx: Run, before: StatusJson, stoppedBefore: number): Promise<void> {
  const d = ctx.daemon!;
  const daemonNow = () => Date.now() + ctx.offset;
  // Stamped after the step: not ahead of the daemon's clock now (those from before a step back are an hour ahead).
  const stamped = (s: StatusJson, after: number) => {
    const t = s.lastCheckinAt === null ? Number.NaN : Date.parse(s.lastCheckinAt);
    return t > after && t <= daemonNow() + 1000;
  };
  // Running, or running with a check-in overdue (a slow one on a loaded machine): not stopping, not relaunched.
  const up = (s: StatusJson) => s.pid === before.pid && /^server\.(running|awaiting-checkin)$/.test(s.state);
  // Either fact, or the server is no longer the one that was running (then the asserts below say so).
  const checkedInAfter = (what: string, after: number) =>
    waitFor(
      what,
      async () => {
        const s = await d.status('steady', TOKEN);
        return !up(s) || stamped(s, after) ? s : undefined;
      },
      TIMEOUT_S * 1000 + 20_000,
    );
  const first = await checkedInAfter('a check-in of steady after the step', daemonNow());
  const past = Date.parse(first.lastCheckinAt ?? '') + TIMEOUT_S * 1000 + 500;
  const later = up(first) ? await checkedInAfter('a check-in a TimeoutSeconds later', past) : first;
  assert.is(later.pid, before.pid, 'the same server: not killed as hung');
  assert.ok(up(later), `steady still running (${later.state})`);
  assert.is(later.restarts, before.restarts, 'no restart');
  assert.is(stops(d, 'steady').length, stoppedBefore, 'not stopped since the step');
}

/** After a step: `hung` is told to stop checking in, and is killed for it while running; else says what became of it. */
async function hangsAndIsKilled(ctx: Run): Promise<void> {
  const d = ctx.daemon!;
  await waitState(d, 'hung', TOKEN, 'server.running', { timeoutMs: 30_000 });
  const kills = stops(d, 'hung').length;
  await writeFile(ctx.hangFile, '');
  try {
    await waitFor(
      'hung killed as hung after the step',
      () => stops(d, 'hung').length > kills,
      TIMEOUT_S * 1000 + 20_000,
    );
  } catch (err) {
    const recent = logLines(d, /watchdog:hung/).slice(-12);
    throw new Error(`${(err as Error).message}; its last lines:\n${recent.join('\n')}`, { cause: err });
  }
  const last = stops(d, 'hung').at(-1) ?? '';
  // Running, its check-in overdue (`awaiting-checkin`), then killed for it: a hang, not a failed start.
  assert.match(last, /from=server\.awaiting-checkin/, `killed as hung (${last})`);
}

test('clock-step :: +1 h: no false hang, a silent server is still killed, the schedule fires at its wall time', async (ctx) => {
  const d = ctx.daemon!;
  const before = await d.status('steady', TOKEN);
  const stopped = stops(d, 'steady').length;
  const sched = (await d.status('sched', TOKEN)) as Status;
  assert.is(sched.maintenance.nextRestart, new Date(ctx.schedAt).toISOString(), 'the schedule as configured');
  const pending = /^(\S+) .*\[watchdog:sched:maintenance\] maintenance restart pending when=Now source=schedule/m;

  await step(ctx, HOUR);
  const left = ctx.schedAt - HOUR - Date.now();
  if (left < 2000)
    throw new Error(`the daemon took too long to start: the schedule was due ${-left} ms before the step`);
  assert.not.match(d.log(), pending, 'not fired before its time');

  await survives(ctx, before, stopped);
  await hangsAndIsKilled(ctx);
  // Timers wait on the monotonic clock, where the time named is still an hour off: it fires by the wall clock.
  const fired = await waitFor(
    'the scheduled restart at its wall-clock time',
    () => pending.exec(d.log()),
    left + 30_000,
  );
  // The daemon's log line carries its (stepped) wall-clock time.
  const at = Date.parse(fired[1] ?? '');
  assert.ok(
    at >= ctx.schedAt && at < ctx.schedAt + 20_000,
    `fired at ${fired[1]}, due ${new Date(ctx.schedAt).toISOString()}`,
  );
});

test('clock-step :: -1 h: no false hang, a silent server is still killed', async (ctx) => {
  const d = ctx.daemon!;
  const before = await waitState(d, 'steady', TOKEN, 'server.running');
  const stopped = stops(d, 'steady').length;
  await step(ctx, 0);
  await survives(ctx, before, stopped);
  await hangsAndIsKilled(ctx);
});

test('clock-step :: a hold runs its length through a step each way, shown as it was set', async (ctx) => {
  const d = ctx.daemon!;
  const holdSeconds = 24;
  const ranOut = () => logLines(d, /\[watchdog:steady:maintenance\] maintenance hold ran out/).length;
  assert.is(await d.control('steady', TOKEN, `hold?minutes=${holdSeconds / 60}&reason=clock`), 200);
  const from = performance.now();
  const hold = async () => ((await d.status('steady', TOKEN)) as Status).maintenance.hold;
  const set = await hold();
  assert.is(set?.reason, 'clock');
  // A step forward puts the wall clock past the hold's shown end: it holds on all the same, and says so.
  await step(ctx, HOUR);
  assert.equal(await hold(), set, 'still held after the step forward, its times as they were');
  await step(ctx, -HOUR);
  assert.equal(await hold(), set, 'still held after the step back');
  assert.is(ranOut(), 0);
  await waitFor('the hold to run out', () => ranOut() > 0, (holdSeconds + 30) * 1000);
  const took = (performance.now() - from) / 1000;
  assert.ok(
    took > holdSeconds - 1 && took < holdSeconds + 15,
    `ran out after ${took.toFixed(1)} s, not ${holdSeconds}`,
  );
  assert.is(await hold(), null);
  await step(ctx, 0);
});

test.run();
