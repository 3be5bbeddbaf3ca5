/**
 * Maintenance with the real daemon and demo servers: a 6-field schedule restarts within its period,
 * `When: Empty` waits while a UDP player is on and restarts within a poll of them leaving, `restart?when=RoundEnd`
 * reaches the server as POST /update, and a hold holds back a schedule and outlives a daemon restart. One daemon
 * (then its successor in the same folder) for all of it.
 */
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { LastExitStatus, MaintenanceStatus, ResourceStatus } from '../../src/supervisor/status.ts';
import { runMain } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { basic, daemonSuite, type StatusJson, startDaemon, waitState } from '../_support/daemon.ts';
import { udpPlayer } from '../_support/demo.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { fixture, writeServerScript } from '../_support/fixtures.ts';

type Status = StatusJson & {
  maintenance: MaintenanceStatus;
  lastExit: LastExitStatus | null;
  startedAt: string | null;
  players?: number | null;
  resources?: ResourceStatus | null;
};
const TOKEN = 'tok';
const POLL_SECONDS = 0.2;

interface Ctx {
  ports: Record<'sched' | 'empty' | 'roundend' | 'held', number>;
  /** The second daemon's configuration: the held instance alone (the others need not start again). */
  heldYaml: string;
}

const maintenance = (lines: string[]) => ['      Maintenance:', ...lines.map((l) => `        ${l}`)].join('\n');

const s = daemonSuite<Ctx>('e2e maintenance', {
  prefix: 'wd-maint-',
  ctx: { ports: { sched: 0, empty: 0, roundend: 0, held: 0 }, heldYaml: '' },
  async config(ctx) {
    for (const key of Object.keys(ctx.ports) as Array<keyof Ctx['ports']>) ctx.ports[key] = await freePort();
    // A plain node fixture starts faster than the demo; the demo is there for its UDP players.
    const runCommand = await writeServerScript(join(ctx.dir, 'server.sh'), fixture('log-starts.mjs'));
    // Resources sampled at the poll's interval: the samples (with their player count) are the test's clock.
    const extra = `  MaintenancePollSeconds: ${POLL_SECONDS}\n  ResourceSampleSeconds: ${POLL_SECONDS}`;
    const held = {
      key: 'held',
      port: ctx.ports.held,
      runCommand,
      // Dummy: every check finds an update (revision + 1), for the crash during the hold.
      extra: `      UpdateType: Dummy\n${maintenance(['RestartSchedule: "*/2 * * * * *"', 'TimeZone: UTC', 'When: Now'])}`,
    };
    ctx.heldYaml = testConfig({ extra, instances: [held] });
    return testConfig({
      extra,
      instances: [
        {
          key: 'sched',
          port: ctx.ports.sched,
          runCommand,
          extra: maintenance(['RestartSchedule: "*/5 * * * * *"', 'TimeZone: UTC', 'When: Now']),
        },
        { key: 'empty', port: ctx.ports.empty, extra: maintenance(['When: Empty', 'MaxDelayMinutes: 5']) },
        { key: 'roundend', port: ctx.ports.roundend, runCommand },
        held,
      ],
    });
  },
  async before(ctx) {
    const d = ctx.daemon;
    if (!d) throw new Error('no daemon');
    // Not sched and held: their 5 s and 2 s schedules restart them from the first launch on, and under load a launch
    // can take longer than that; their tests wait for them (held once its hold is placed).
    await Promise.all(
      ['empty', 'roundend'].map((key) => waitState(d, key, TOKEN, 'server.running', { timeoutMs: 30_000 })),
    );
  },
});

const status = async (ctx: Ctx & { daemon?: { status(k: string, t: string): Promise<StatusJson> } }, key: string) =>
  (await ctx.daemon?.status(key, TOKEN)) as Status;

const post = async (url: string, key: string, path: string) => {
  const res = await fetch(`${url}/instances/${key}/${path}`, {
    method: 'POST',
    headers: { authorization: basic(key, TOKEN) },
  });
  return { status: res.status, text: await res.text() };
};

s('maintenance :: a 6-field schedule restarts the server within its period', async (ctx) => {
  const d = ctx.daemon;
  if (!d) throw new Error('no daemon');
  const pending = /\[watchdog:sched:maintenance\] maintenance restart pending when=Now source=schedule/;
  // The "before" must be read between two firings: one that lands while it is read (a slow machine, a 5 s period)
  // would show the restart after next. So it is read again, at most three times, until no firing came in between.
  let before: Status | undefined;
  let mark = 0;
  for (let attempt = 0; attempt < 3 && !before; attempt++) {
    await waitState(d, 'sched', TOKEN, 'server.running', { timeoutMs: 30_000 });
    mark = d.log().length;
    const read = await status(ctx, 'sched');
    const metrics = await (await fetch(`${d.url}/metrics`)).text();
    if (read.state === 'server.running' && !pending.test(d.log().slice(mark))) {
      before = read;
      assert.match(
        metrics,
        /^watchdog_maintenance_next_scheduled_timestamp_seconds\{instance="sched",what="restart"\} \d+/m,
        'and on /metrics',
      );
    }
  }
  if (!before) throw new Error('three reads in a row were each crossed by a scheduled restart');
  assert.ok(before.maintenance.nextRestart, 'the next restart is shown');
  // A deadline that only catches a schedule that never fires (the period is 5 s).
  await waitState(d, 'sched', TOKEN, 'server.running', { notPid: before.pid, timeoutMs: 30_000 });
  const after = await status(ctx, 'sched');
  assert.ok(after.restarts > before.restarts, 'counted as a restart');
  assert.is(after.lastExit?.reason, 'restart', 'its exit is the restart, not a crash');
  assert.match(d.log().slice(mark), pending);
  // The restart shown was the one carried out: the new server started at or after it, and the next one moved on.
  const shown = Date.parse(before.maintenance.nextRestart!);
  assert.ok(Date.parse(after.startedAt!) >= shown, `started ${after.startedAt}, the restart was due ${shown}`);
  assert.ok(Date.parse(after.maintenance.nextRestart!) > shown, 'the next restart is a later one');
});

s('maintenance :: When: Empty waits while a player is on, and restarts within a poll of 0', async (ctx) => {
  const d = ctx.daemon;
  if (!d) throw new Error('no daemon');
  const player = await udpPlayer(ctx.ports.empty);
  try {
    assert.is(await player.send('join alice'), 'welcome alice');
    const before = await status(ctx, 'empty');
    const answer = await post(d.url, 'empty', 'restart?when=Empty');
    assert.is(answer.status, 200, answer.text);
    await waitFor('the restart pending for players', async () => {
      const m = (await status(ctx, 'empty')).maintenance;
      return m.pending?.waitingFor === 'Empty';
    });
    // Several samples of the server by the daemon, each seeing alice, go by (sampled at the poll's interval):
    // nothing happens.
    const samples = new Set<string>();
    await waitFor(
      'five samples with alice on',
      async () => {
        const now = await status(ctx, 'empty');
        if (now.pid !== before.pid) return true; // restarted under her: the assertion below says so
        if (now.players === 1 && now.resources) samples.add(now.resources.at);
        return samples.size >= 5;
      },
      15_000,
      50,
    );
    const waiting = await status(ctx, 'empty');
    assert.is(waiting.pid, before.pid, 'still the same server while a player is on');
    assert.is(waiting.maintenance.pending?.when, 'Empty');
    assert.is(await player.send('leave'), 'bye');
    // The restart is under way (asked for, or the server already gone) once it is empty: a deadline that only
    // catches a restart left to MaxDelayMinutes (5 min) or never done.
    await waitFor(
      'the restart once empty',
      async () => {
        const now = await status(ctx, 'empty');
        return now.pid !== before.pid || now.maintenance.pending?.waitingFor === 'exit';
      },
      15_000,
      20,
    );
    assert.ok(Date.parse(waiting.maintenance.pending!.deadline) > Date.now(), 'before its MaxDelayMinutes deadline');
    await waitState(d, 'empty', TOKEN, 'server.running', { notPid: before.pid });
    assert.is((await status(ctx, 'empty')).maintenance.pending, null);
  } finally {
    await player.close();
  }
});

s('maintenance :: restart?when=RoundEnd delivers POST /update to the server', async (ctx) => {
  const d = ctx.daemon;
  if (!d) throw new Error('no daemon');
  const before = await status(ctx, 'roundend');
  const mark = d.log().length;
  assert.is((await post(d.url, 'roundend', 'restart?when=RoundEnd')).status, 200);
  await waitState(d, 'roundend', TOKEN, 'server.running', { notPid: before.pid });
  // The fixture logs the POST /update it was given and leaves (a game would wait for its round to end).
  assert.match(d.log().slice(mark), /update requested \(reason UpdateAvailable\)/);
  const after = await status(ctx, 'roundend');
  assert.is(after.lastExit?.reason, 'restart', 'its exit is the restart asked for, not a crash');
  assert.is((await post(d.url, 'roundend', 'restart?when=Later')).status, 400, 'an unknown policy is refused');
});

s('maintenance :: a hold holds a schedule back and outlives a daemon restart', async (ctx) => {
  const d = ctx.daemon;
  if (!d) throw new Error('no daemon');
  const cli = await runMain(
    ['hold', 'held', '--for', '10m', '--reason', 'tournament', '--url', d.url, '--token', TOKEN],
    {
      cwd: ctx.dir,
    },
  );
  assert.is(cli.code, 0, cli.stderr);
  const first = await status(ctx, 'held');
  assert.is(first.maintenance.hold?.reason, 'tournament');
  // The CLI prints the daemon's own end time, not one it computed.
  assert.is(cli.stdout, `maintenance of held held until ${first.maintenance.hold?.until} at ${d.url}\n`);
  // A shorter hold replaces it, and the CLI says what it replaced; then the 10 minutes again.
  const shorter = await runMain(['hold', 'held', '--for', '90s', '--url', d.url, '--token', TOKEN], { cwd: ctx.dir });
  assert.is(shorter.code, 0, shorter.stderr);
  assert.match(shorter.stdout, `(shortened: the hold it replaces ran until ${first.maintenance.hold?.until})`);
  const again = await runMain(
    ['hold', 'held', '--for', '10m', '--reason', 'tournament', '--url', d.url, '--token', TOKEN],
    {
      cwd: ctx.dir,
    },
  );
  assert.not.match(again.stdout, /shortened/, 'a longer hold says nothing of the kind');
  const held = await waitState(d, 'held', TOKEN, 'server.running', { timeoutMs: 30_000 }).then(() =>
    status(ctx, 'held'),
  );
  // The 2 s schedule fires at least once while held; the server stays.
  await waitFor(
    'the schedule to wait for the hold',
    async () => {
      const m = (await status(ctx, 'held')).maintenance;
      return m.pending?.waitingFor === 'hold';
    },
    15_000,
  );
  assert.is((await status(ctx, 'held')).pid, held.pid, 'held: not restarted');

  // A found update, then a crash during the hold: relaunched on the build it had; the update waits for the hold.
  assert.is((await post(d.url, 'held', 'update')).status, 200);
  await waitFor('the found update', async () => (await status(ctx, 'held')).updatePending === true, 15_000);
  const crashed = await status(ctx, 'held');
  process.kill(crashed.pid as number, 'SIGKILL');
  await waitState(d, 'held', TOKEN, 'server.running', { notPid: crashed.pid });
  const relaunched = await status(ctx, 'held');
  assert.is(relaunched.revision, crashed.revision, 'the installed build');
  assert.is(relaunched.updatePending, true, 'the update is still pending');
  const m = relaunched.maintenance.pending;
  assert.equal([m?.action, m?.waitingFor], ['update', 'hold']);

  await d.stop();
  const next = await startDaemon(ctx.heldYaml, { dir: ctx.dir });
  ctx.daemon = next;
  await waitState(next, 'held', TOKEN, 'server.running');
  const after = (await next.status('held', TOKEN)) as Status;
  assert.is(after.maintenance.hold?.reason, 'tournament', 'the hold was kept in data.json');
  assert.is(after.maintenance.hold?.until, held.maintenance.hold?.until);
  const pid = after.pid;
  await waitFor(
    'the schedule to wait for the kept hold',
    async () => ((await next.status('held', TOKEN)) as Status).maintenance.pending?.waitingFor === 'hold',
    15_000,
  );
  assert.is(((await next.status('held', TOKEN)) as Status).pid, pid, 'still held after the restart');
  const released = await runMain(['release', 'held', '--url', next.url, '--token', TOKEN], { cwd: ctx.dir });
  assert.is(released.code, 0, released.stderr);
  await waitState(next, 'held', TOKEN, 'server.running', { notPid: pid, timeoutMs: 15_000 });
  assert.is((await post(next.url, 'held', 'release')).status, 409, 'nothing left to release');
});

s.run();
