/**
 * Maintenance on a simulated clock: cron times across DST, the Empty policy, MaxDelayMinutes, holds, and a plan
 * kept across a daemon restart. The instance statechart's maintenance region runs with the machine tests' fakes,
 * the real schedule actor and the supervisor's plan, status and bus announcements; the player polls answer from a
 * list the test sets.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { MaintenancePolicy, SavedMaintenance } from '../../machines/instance.types.ts';
import { type BusEvents, createBus } from '../../src/bus.ts';
import { cronProblem, nextFire } from '../../src/config/cron.ts';
import type { MaintenanceSettings } from '../../src/config/sections/maintenance.ts';
import type { Logger } from '../../src/log.ts';
import { announce, maintenanceStatus, savedPlanOf } from '../../src/supervisor/maintenance/plan.ts';
import { createMaintenanceSchedule, type MaintenanceSchedule } from '../../src/supervisor/maintenance/schedule.ts';
import { createHarness, type Harness, settle, stampAt } from '../machines/_support/harness.ts';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet };
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

// ---

const cron = suite('maintenance cron');

cron('cron :: a daily 02:30 in Europe/Berlin fires once a day across both DST changes', () => {
  const zone = 'Europe/Berlin';
  const fires = (from: string, n: number) => {
    const out: (string | null)[] = [];
    let t = Date.parse(from);
    for (let i = 0; i < n; i++) {
      const next = nextFire('30 2 * * *', zone, t);
      out.push(iso(next));
      if (next === null) break;
      t = next;
    }
    return out;
  };
  // 29 March 2026: 02:00 CET jumps to 03:00 CEST, so 02:30 does not exist that day: it fires once, at 03:00.
  assert.equal(fires('2026-03-28T00:00:00Z', 3), [
    '2026-03-28T01:30:00.000Z',
    '2026-03-29T01:00:00.000Z',
    '2026-03-30T00:30:00.000Z',
  ]);
  // 25 October 2026: 03:00 CEST goes back to 02:00 CET, so 02:30 happens twice: it fires once, at the first.
  assert.equal(fires('2026-10-24T12:00:00Z', 3), [
    '2026-10-25T00:30:00.000Z',
    '2026-10-26T01:30:00.000Z',
    '2026-10-27T01:30:00.000Z',
  ]);
});

cron('cron :: 6 fields put seconds first; a bad schedule says why', () => {
  const from = Date.parse('2026-11-25T10:00:01Z');
  assert.is(iso(nextFire('*/5 * * * * *', 'UTC', from)), '2026-11-25T10:00:05.000Z');
  assert.is(iso(nextFire('0 6 * * *', 'UTC', from)), '2026-11-26T06:00:00.000Z');
  assert.is(cronProblem('0 6 * * *'), null);
  assert.match(cronProblem('* * *') ?? '', 'found 3');
  assert.match(cronProblem('0 61 * * *') ?? '', 'hour');
});

cron.run();

// ---

interface Ctx {
  h: Harness;
  settings: MaintenanceSettings;
  schedule: MaintenanceSchedule;
  /** What the next polls answer, in order; null once the list is used up. */
  players: number[];
  /** How many polls were made. */
  polls(): number;
  /** When each poll was made, in ms since the start. */
  pollTimes(): number[];
  /** When the region restarted the server for maintenance, in ms since the start. */
  restarts: number[];
  /** How many times the server was asked to leave at its round end (LEAVE). */
  asks(): number;
  events: Array<{ type: string } & Record<string, unknown>>;
  /** What the provider says it has staged. */
  staged: string | null;
  status(): ReturnType<typeof maintenanceStatus>;
  requestRestart(when: MaintenancePolicy): void;
  /** An update check that answers at once. */
  updateChecked(available: boolean): Promise<void>;
  hold(ms: number, reason: string): void;
  /** Ends a hold; false when there was none. */
  release(): boolean;
  /** The server goes (a clean exit) and is launched again: what was pending for it is done. */
  serverGone(): Promise<void>;
  /** Stops the server on request: no server runs afterwards. */
  stopServer(): void;
  /** Advances the clock in steps of `stepMs`, letting the player polls answer between steps. */
  advance(ms: number, stepMs?: number): Promise<void>;
  /** How far the wall clock the events are stamped with is off the simulated (monotonic) one: a step of it. */
  wallStep: number;
}

const START = Date.parse('2026-11-25T12:00:00Z');
const POLL_MS = 1000;

/** An instance with a running, checked-in server at START; its check-ins are never overdue here. */
async function harness(settings: Partial<MaintenanceSettings>): Promise<Ctx> {
  const bus = createBus();
  const ctx = {
    settings: { When: 'RoundEnd', MaxDelayMinutes: 120, ...settings },
    restarts: [],
    events: [],
    staged: null,
    wallStep: 0,
  } as unknown as Ctx;
  const rules = () => ({
    when: ctx.settings.When ?? 'RoundEnd',
    maxDelayMs: (ctx.settings.MaxDelayMinutes ?? 120) * 60_000,
    pollMs: POLL_MS,
  });
  const h = createHarness({ checkinTimeoutMs: 1e9 }, undefined, rules(), {
    now: START,
    actors: (clock) => {
      ctx.schedule = createMaintenanceSchedule(
        { settings: () => ctx.settings, canCheck: () => true, log: quiet },
        clock,
        () => stampAt(clock.now()),
      );
      return { maintenanceSchedule: ctx.schedule.actor };
    },
  });
  ctx.h = h;
  for (const type of ['instance:maintenance-pending', 'instance:maintenance-done'] as const)
    bus.on(type, (e: BusEvents[typeof type]) => ctx.events.push({ type, ...e }));
  h.actor.on('*', (e) => {
    if (!announce({ key: 'alpha', bus, log: quiet }, e, h.clock.now())) return;
    if (e.type === 'maintenance-step' && e.step === 'restart') ctx.restarts.push(h.clock.now() - START);
  });
  ctx.players = h.players;
  ctx.polls = () => h.pollTimes.length;
  ctx.pollTimes = () => h.pollTimes.map((t) => t - START);
  ctx.asks = () => h.processes.flatMap((p) => p.commands).filter((c) => c.type === 'LEAVE').length;
  ctx.status = () =>
    maintenanceStatus(
      h.actor.getSnapshot(),
      h.clock.now(),
      { policy: rules().when, ...ctx.schedule.next() },
      ctx.staged,
    );
  const at = () => ({ wall: h.clock.now() + ctx.wallStep, mono: h.clock.now() });
  ctx.requestRestart = (when) => h.actor.send({ type: 'MAINTAIN', source: 'request', when, by: 'mo', at: at() });
  ctx.updateChecked = (available) => h.checkUpdate(available);
  ctx.hold = (ms, reason) => h.actor.send({ type: 'HOLD', ms, reason, at: at() });
  ctx.release = () => {
    if (!h.actor.getSnapshot().matches({ maintenance: { hold: 'held' } })) return false;
    h.actor.send({ type: 'RELEASE_HOLD', at: at() });
    return true;
  };
  ctx.serverGone = async () => {
    h.proc().exit(0);
    if (h.state() === 'updating') await h.finishUpdate({ revision: 'r2', changed: true });
    h.proc().started(200 + h.processes.length);
    h.checkin();
  };
  ctx.stopServer = () => {
    h.actor.send({ type: 'STOP' });
    h.proc().exit(0);
    assert.is(h.state(), 'stopped.idle');
  };
  ctx.advance = async (ms, stepMs = 100) => {
    for (let done = 0; done < ms; done += stepMs) {
      h.clock.increment(stepMs);
      await settle();
    }
  };
  await h.run();
  return ctx;
}

/** The bus event saying that instance alpha's `kind` is over, `how`, `ms` after START. */
const doneEvent = (kind: 'restart' | 'update', how: 'done' | 'forced', ms: number) => ({
  type: 'instance:maintenance-done',
  key: 'alpha',
  kind,
  how,
  at: START + ms,
});

/** The harness's machine never errored; it is stopped. */
function end(ctx: Ctx): void {
  ctx.h.stop();
  assert.equal(ctx.h.errors, [], 'the machine never errors');
}

const policy = suite('maintenance policies');

policy('maintenance :: Empty restarts on the first poll that reports 0 players, and not before', async () => {
  const h = await harness({ When: 'Empty' });
  h.players.push(3, 2, 1, 0, 0);
  h.requestRestart('Empty');
  await h.advance(2_500);
  assert.is(h.polls(), 3, 'one poll at once, then one a second');
  assert.equal(h.restarts, [], 'players were on');
  assert.is(h.status().pending?.waitingFor, 'Empty');
  await h.advance(1_000);
  assert.is(h.polls(), 4);
  assert.is(h.restarts.length, 1, 'restarted on the poll that said 0');
  const fourth = h.pollTimes()[3] ?? -1;
  assert.ok((h.restarts[0] ?? -1) >= fourth && (h.restarts[0] ?? -1) <= fourth + 100, 'as its answer came');
  await h.advance(5_000);
  assert.is(h.polls(), 4, 'no polling once the restart is under way');
  assert.is(h.restarts.length, 1);
  await h.serverGone();
  assert.is(h.status().pending, null);
  assert.equal(
    h.events.map((e) => [e.type, e.kind, e.how ?? e.when]),
    [
      ['instance:maintenance-pending', 'restart', 'Empty'],
      ['instance:maintenance-done', 'restart', 'done'],
    ],
  );
  assert.is(h.events[0]?.by, 'mo', 'the pending restart names who asked, for its notice');
  end(h);
});

policy('maintenance :: a server that gives no player count is asked again at the next poll, not at once', async () => {
  const h = await harness({ When: 'Empty' });
  h.requestRestart('Empty');
  await h.advance(2_500);
  assert.is(h.polls(), 3, 'one poll at once, then one a second, as with a count');
  assert.equal(h.restarts, []);
  end(h);
});

policy('maintenance :: MaxDelayMinutes forces a graceful restart while players stay on', async () => {
  const h = await harness({ When: 'Empty', MaxDelayMinutes: 0.5 });
  h.players.push(...Array.from({ length: 100 }, () => 7));
  h.requestRestart('Empty');
  assert.is(h.status().pending?.deadline, iso(START + 30_000));
  await h.advance(29_000, 1000);
  assert.equal(h.restarts, []);
  await h.advance(2_000, 1000);
  assert.equal(h.restarts, [30_000], 'forced at the deadline');
  assert.is(h.h.proc().commands.at(-1)?.type, 'STOP_GRACEFULLY', 'a graceful shutdown');
  await h.serverGone();
  assert.equal(h.events.at(-1), doneEvent('restart', 'forced', 31_000));
  end(h);
});

policy(
  'maintenance :: a restart carried out at its moment and ending after the deadline is done, not forced',
  async () => {
    const h = await harness({ When: 'Empty', MaxDelayMinutes: 0.5 });
    h.players.push(3, 0);
    h.requestRestart('Empty');
    await h.advance(3_000, 1000);
    assert.equal(h.restarts.length, 1, 'restarted on the poll that saw 0 players');
    assert.ok((h.restarts[0] ?? Infinity) < 30_000, 'before the deadline');
    // The server takes its time to leave (its round, the stop timeout): it is gone only after the deadline.
    await h.advance(40_000, 1000);
    assert.is(h.restarts.length, 1, 'no second, forced restart');
    await h.serverGone();
    assert.equal(h.events.at(-1), doneEvent('restart', 'done', 43_000));
    end(h);
  },
);

policy('maintenance :: RoundEnd asks the server once and waits for it to leave', async () => {
  const h = await harness({});
  h.requestRestart('RoundEnd');
  await h.advance(10_000, 1000);
  assert.is(h.asks(), 1);
  assert.equal(h.restarts, []);
  assert.is(h.status().pending?.waitingFor, 'RoundEnd');
  assert.is(h.polls(), 0, 'RoundEnd reads no player count');
  // Its clean exit is the restart it was asked for, not an exit nobody asked for.
  h.h.proc().exit(0);
  assert.is(h.h.context().lastExit?.reason, 'restart');
  assert.is(h.status().pending, null);
  end(h);
});

policy('maintenance :: a found update follows When; a restart asked with Now goes at once', async () => {
  const h = await harness({ When: 'Now' });
  await h.updateChecked(false);
  assert.equal(h.restarts, [], 'no update, nothing to do');
  await h.updateChecked(true);
  assert.equal(h.restarts, [0]);
  assert.is(h.events[0]?.kind, 'update');
  end(h);
});

policy.run();

// ---

const holds = suite('maintenance holds and schedules');

holds('maintenance :: a hold defers a scheduled restart, and its expiry releases it', async () => {
  const h = await harness({ RestartSchedule: '*/10 * * * * *', TimeZone: 'UTC', When: 'Now' });
  assert.is(h.status().nextRestart, iso(START + 10_000));
  h.hold(25_000, 'tournament');
  await h.advance(10_000, 1000);
  assert.equal(h.restarts, [], 'held');
  const s = h.status();
  assert.is(s.pending?.source, 'schedule');
  assert.is(s.pending?.waitingFor, 'hold');
  assert.equal(s.hold, { reason: 'tournament', since: iso(START), until: iso(START + 25_000) });
  await h.advance(14_000, 1000);
  assert.equal(h.restarts, [], 'still held; later fires add nothing while one is pending');
  await h.advance(2_000, 1000);
  assert.equal(h.restarts, [25_000], 'the hold ran out: restarted at once (When: Now)');
  assert.is(h.status().hold, null);
  assert.equal(
    h.events.map((e) => [e.type, e.kind, e.how ?? e.when ?? e.reason]),
    [
      ['instance:maintenance-pending', 'hold', 'tournament'],
      ['instance:maintenance-pending', 'scheduled-restart', 'Now'],
      ['instance:maintenance-done', 'hold', 'expired'],
    ],
  );
  end(h);
});

holds('maintenance :: a step of the wall clock by ±1 h ends no hold early or late and moves no deadline', async () => {
  for (const step of [3_600_000, -3_600_000]) {
    const h = await harness({ When: 'RoundEnd', MaxDelayMinutes: 1 });
    await h.updateChecked(true);
    assert.is(h.status().pending?.deadline, iso(START + 60_000));
    await h.advance(5_000, 1000);
    // The wall clock steps; holds and deadlines go on by the monotonic clock, the times shown by the wall one.
    h.wallStep = step;
    await h.advance(5_000, 1000);
    h.hold(25_000, 'event');
    await h.advance(24_000, 1000);
    const held = h.status();
    assert.equal(held.hold, { reason: 'event', since: iso(START + 10_000 + step), until: iso(START + 35_000 + step) });
    assert.is(held.pending?.waitingFor, 'hold');
    assert.is(h.asks(), 1, 'asked to leave before the hold, not since');
    await h.advance(2_000, 1000);
    assert.is(h.status().hold, null, 'the hold ran out 25 s after it began');
    assert.equal(h.events.at(-1), {
      type: 'instance:maintenance-done',
      key: 'alpha',
      kind: 'hold',
      how: 'expired',
      at: START + 35_000,
    });
    assert.is(h.asks(), 2, 'asked again once the hold ran out');
    // A found update gets its full MaxDelayMinutes from the hold's end: forced 60 s after it, not an hour off.
    assert.is(h.status().pending?.deadline, iso(START + 95_000 + step));
    await h.advance(58_000, 1000);
    assert.equal(h.restarts, []);
    await h.advance(2_000, 1000);
    assert.equal(h.restarts, [95_000], `forced at the deadline (step ${step / 3_600_000} h)`);
    end(h);
  }
});

holds('maintenance :: a restart asked for with ?when= is not held; release ends a hold early', async () => {
  const h = await harness({ When: 'Now' });
  h.hold(60_000, 'event');
  await h.updateChecked(true);
  assert.equal(h.restarts, [], 'a found update waits');
  assert.is(h.release(), true);
  assert.equal(h.restarts, [0], 'released: it goes');
  assert.is(h.release(), false, 'nothing left to release');
  await h.serverGone();
  h.hold(60_000, 'event');
  h.requestRestart('Now');
  assert.equal(h.restarts, [0, 0], "a person's restart goes through a hold");
  end(h);
});

holds('maintenance :: a held update says the provider has it staged', async () => {
  const h = await harness({ When: 'Now' });
  assert.is(h.status().staged, null);
  h.hold(60_000, 'event');
  h.staged = '42';
  await h.updateChecked(true);
  const s = h.status();
  assert.equal([s.pending?.action, s.pending?.waitingFor, s.staged], ['update', 'hold', '42']);
  assert.equal(h.restarts, [], 'the install waits');
  end(h);
});

holds('maintenance :: a crash during a hold keeps a found update pending until the hold ends', async () => {
  const h = await harness({ When: 'Now' });
  h.hold(10_000, 'event');
  await h.updateChecked(true);
  h.h.proc().exit(1);
  assert.is(h.h.state(), 'server.starting', 'the machine relaunches a crashed server on the installed build');
  assert.is(h.h.updates.length, 0, 'no install started');
  assert.equal([h.status().pending?.action, h.status().pending?.waitingFor], ['update', 'hold']);
  h.h.proc().started(300);
  h.h.checkin();
  await h.advance(11_000, 1000);
  assert.equal(h.restarts, [10_000], 'the hold ran out: the update goes (When: Now)');
  await h.serverGone();
  assert.is(h.h.context().revision, 'r2', 'installed on the way');
  assert.is(h.status().pending, null);
  assert.equal(
    h.events.filter((e) => e.kind === 'update').map((e) => [e.type, e.how ?? e.when]),
    [
      ['instance:maintenance-pending', 'Now'],
      ['instance:maintenance-done', 'done'],
    ],
  );
  end(h);
});

holds('maintenance :: a launch with an update still pending waits for the hold (after a crash)', async () => {
  const h = await harness({ RestartSchedule: '*/10 * * * * *', TimeZone: 'UTC', When: 'Now' });
  assert.is(h.status().pending, null, 'unheld: the launch went through the install');
  h.hold(60_000, 'event');
  await h.advance(10_000, 1000);
  assert.is(h.status().pending?.source, 'schedule');
  // An update is found (the pending restart stays), then the server crashes and comes back without it.
  await h.updateChecked(true);
  h.h.proc().exit(1);
  assert.is(h.h.state(), 'server.starting');
  const s = h.status();
  assert.equal([s.pending?.action, s.pending?.waitingFor], ['update', 'hold']);
  assert.equal(h.restarts, []);
  end(h);
});

holds("maintenance :: a person's restart during a hold installs the held update: done at its launch", async () => {
  const h = await harness({ When: 'Now' });
  h.hold(60_000, 'event');
  await h.updateChecked(true);
  // The server goes for the restart; the update is still held until the launch shows it installed.
  h.h.actor.send({ type: 'RESTART' });
  h.h.proc().exit(0);
  assert.is(h.h.state(), 'updating');
  assert.is(h.status().pending?.action, 'update');
  await h.h.finishUpdate({ revision: 'r2', changed: true });
  assert.is(h.status().pending, null);
  assert.equal(h.events.at(-1), doneEvent('update', 'done', 0));
  h.release();
  assert.equal(h.restarts, [], 'nothing left for the hold to let through');
  end(h);
});

holds('maintenance :: an update found while held and no server runs waits for the hold', async () => {
  const h = await harness({ When: 'Now' });
  h.stopServer();
  await h.updateChecked(true);
  assert.is(h.status().pending, null, 'unheld: the next launch installs it');
  h.hold(60_000, 'event');
  await h.updateChecked(true);
  assert.equal([h.status().pending?.action, h.status().pending?.waitingFor], ['update', 'hold']);
  end(h);
});

holds('maintenance :: a restart asked with ?when= of an instance without a server is done at once', async () => {
  const h = await harness({});
  h.stopServer();
  h.requestRestart('Empty');
  assert.is(h.h.state(), 'server.starting', 'restarted at once');
  assert.is(h.status().pending, null, 'nothing waits');
  assert.is(h.polls(), 0);
  end(h);
});

holds('maintenance :: UpdateSchedule asks for checks; a scheduled restart skips a stopped server', async () => {
  const h = await harness({ UpdateSchedule: '*/2 * * * * *', RestartSchedule: '*/3 * * * * *', TimeZone: 'UTC' });
  h.stopServer();
  let checks = 0;
  for (let i = 0; i < 12; i++) {
    await h.advance(500, 500);
    while (h.h.checks.length > 0) {
      checks += 1;
      await h.h.finishCheck(false);
    }
  }
  assert.is(checks, 3);
  assert.is(h.status().pending, null, 'nothing to restart');
  assert.is(h.h.state(), 'stopped.idle');
  assert.equal(h.schedule.next(), { nextRestart: START + 9_000, nextCheck: START + 8_000 });
  end(h);
});

holds('maintenance :: a config reload takes the new schedules at once', async () => {
  const h = await harness({ RestartSchedule: '0 6 * * *', TimeZone: 'UTC' });
  const reload = () => h.h.actor.send({ type: 'CONFIG', timing: h.h.context().timing });
  assert.is(h.status().nextRestart, '2026-11-26T06:00:00.000Z');
  h.settings = {
    ...h.settings,
    RestartSchedule: '30 13 * * *',
    TimeZone: 'Europe/Berlin',
    UpdateSchedule: '0 * * * *',
  };
  reload();
  assert.is(h.status().nextRestart, '2026-11-25T12:30:00.000Z', '13:30 in Berlin');
  assert.is(h.status().nextUpdateCheck, '2026-11-25T13:00:00.000Z');
  h.settings = { ...h.settings, RestartSchedule: undefined, UpdateSchedule: undefined };
  reload();
  assert.equal(h.schedule.next(), { nextRestart: null, nextCheck: null });
  end(h);
});

holds('maintenance :: a saved plan: the hold stays; a pending action stays only with an adopted server', async () => {
  const plan: SavedMaintenance = {
    pending: {
      action: 'restart',
      source: 'schedule',
      when: 'Empty',
      since: START - 1000,
      deadline: START + 60_000,
      maxDelayMs: 61_000,
      asked: false,
      carried: false,
      forced: false,
    },
    hold: { since: START - 1000, until: START + 5000, reason: 'x' },
  };
  const restore = (h: Ctx, saved: SavedMaintenance, adopted: boolean) =>
    h.h.actor.send({ type: 'RESTORE_MAINTENANCE', saved, adopted, at: stampAt(START) });
  const fresh = await harness({});
  restore(fresh, plan, false);
  assert.is(fresh.status().pending, null, 'the daemon restart relaunched the server');
  assert.is(fresh.status().hold?.reason, 'x');
  end(fresh);
  const adopted = await harness({});
  restore(adopted, plan, true);
  assert.is(adopted.status().pending?.waitingFor, 'hold');
  assert.equal(savedPlanOf(adopted.h.actor.getSnapshot()), plan, 'kept again as it was taken up');
  end(adopted);
  // A shutdown the previous daemon asked for, and did not see through, is asked for again.
  const carried = await harness({});
  restore(carried, { pending: { ...plan.pending!, when: 'Now', carried: true }, hold: null }, true);
  assert.equal(carried.restarts, [0]);
  end(carried);
});

holds.run();
