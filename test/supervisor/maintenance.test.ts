/**
 * Maintenance on a simulated clock: cron times across DST, the Empty policy, MaxDelayMinutes, holds, and
 * a plan kept across a daemon restart. The runner (src/supervisor/maintenance.ts) runs with a fake host that
 * records what it was asked to do and answers the player polls from a list the test sets.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SimulatedClock } from 'xstate';
import { type BusEvents, createBus } from '../../src/bus.ts';
import { cronProblem, nextFire } from '../../src/config/cron.ts';
import type { MaintenanceSettings } from '../../src/config/sections/maintenance.ts';
import type { Logger } from '../../src/log.ts';
import { Maintenance } from '../../src/supervisor/maintenance.ts';
import type { MaintenancePlan } from '../../src/supervisor/maintenance-plan.ts';

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
  clock: SimulatedClock;
  runner: Maintenance;
  settings: MaintenanceSettings;
  /** What the next polls answer, in order; null once the list is used up. */
  players: number[];
  polls: number;
  /** When each poll was made, in ms since the start. */
  pollTimes: number[];
  restarts: number[];
  asks: number;
  checks: number;
  saved: MaintenancePlan[];
  events: Array<{ type: string } & Record<string, unknown>>;
  live: boolean;
  /** What the provider says it has staged. */
  staged: string | null;
  /** Advances the clock in steps of `stepMs`, letting the player polls answer between steps. */
  advance(ms: number, stepMs?: number): Promise<void>;
}

const START = Date.parse('2026-11-25T12:00:00Z');
const POLL_MS = 1000;

function harness(settings: Partial<MaintenanceSettings>): Ctx {
  const clock = new SimulatedClock();
  clock.set(START);
  const bus = createBus();
  const ctx = {
    clock,
    settings: { When: 'RoundEnd', MaxDelayMinutes: 120, ...settings },
    players: [],
    polls: 0,
    pollTimes: [],
    restarts: [],
    asks: 0,
    checks: 0,
    saved: [],
    events: [],
    live: true,
    staged: null,
  } as unknown as Ctx;
  for (const type of ['maintenance:pending', 'maintenance:done'] as const)
    bus.on(type, (e: BusEvents[typeof type]) => ctx.events.push({ type, ...e }));
  ctx.runner = new Maintenance({
    key: 'alpha',
    log: quiet,
    bus,
    settings: () => ctx.settings,
    pollMs: () => POLL_MS,
    canCheck: () => true,
    serverLive: () => ctx.live,
    players: async () => {
      ctx.polls += 1;
      ctx.pollTimes.push(clock.now() - START);
      return ctx.players.shift() ?? null;
    },
    askLeave: async () => {
      ctx.asks += 1;
      return true;
    },
    restart: () => ctx.restarts.push(clock.now() - START),
    checkUpdate: () => {
      ctx.checks += 1;
    },
    staged: () => ctx.staged,
    save: async (plan) => {
      ctx.saved.push(plan);
    },
    clock,
  });
  ctx.advance = async (ms, stepMs = 100) => {
    for (let done = 0; done < ms; done += stepMs) {
      clock.increment(stepMs);
      for (let i = 0; i < 5; i++) await Promise.resolve();
    }
  };
  return ctx;
}

const policy = suite('maintenance policies');

policy('maintenance :: Empty restarts on the first poll that reports 0 players, and not before', async () => {
  const h = harness({ When: 'Empty' });
  h.runner.start(null, false);
  h.players = [3, 2, 1, 0, 0];
  h.runner.requestRestart('Empty');
  await h.advance(2_500);
  assert.is(h.polls, 3, 'one poll at once, then one a second');
  assert.equal(h.restarts, [], 'players were on');
  assert.is(h.runner.status().pending?.waitingFor, 'players');
  await h.advance(1_000);
  assert.is(h.polls, 4);
  assert.is(h.restarts.length, 1, 'restarted on the poll that said 0');
  const fourth = h.pollTimes[3] ?? -1;
  assert.ok((h.restarts[0] ?? -1) >= fourth && (h.restarts[0] ?? -1) <= fourth + 100, 'as its answer came');
  await h.advance(5_000);
  assert.is(h.polls, 4, 'no polling once the restart is under way');
  assert.is(h.restarts.length, 1);
  h.runner.serverGone();
  assert.is(h.runner.status().pending, null);
  assert.equal(
    h.events.map((e) => [e.type, e.kind, e.how ?? e.when]),
    [
      ['maintenance:pending', 'restart', 'Empty'],
      ['maintenance:done', 'restart', 'done'],
    ],
  );
  h.runner.stop();
});

policy('maintenance :: a server that gives no player count is asked again at the next poll, not at once', async () => {
  const h = harness({ When: 'Empty' });
  h.runner.start(null, false);
  h.players = [];
  h.runner.requestRestart('Empty');
  await h.advance(2_500);
  assert.is(h.polls, 3, 'one poll at once, then one a second, as with a count');
  assert.equal(h.restarts, []);
  h.runner.stop();
});

policy('maintenance :: MaxDelayMinutes forces a graceful restart while players stay on', async () => {
  const h = harness({ When: 'Empty', MaxDelayMinutes: 0.5 });
  h.runner.start(null, false);
  h.players = Array.from({ length: 100 }, () => 7);
  h.runner.requestRestart('Empty');
  assert.is(h.runner.status().pending?.deadline, iso(START + 30_000));
  await h.advance(29_000, 1000);
  assert.equal(h.restarts, []);
  await h.advance(2_000, 1000);
  assert.equal(h.restarts, [30_000], 'forced at the deadline');
  h.runner.serverGone();
  assert.equal(h.events.at(-1), {
    type: 'maintenance:done',
    key: 'alpha',
    kind: 'restart',
    how: 'forced',
    at: START + 31_000,
  });
  h.runner.stop();
});

policy(
  'maintenance :: a restart carried out at its moment and ending after the deadline is done, not forced',
  async () => {
    const h = harness({ When: 'Empty', MaxDelayMinutes: 0.5 });
    h.runner.start(null, false);
    h.players = [3, 0];
    h.runner.requestRestart('Empty');
    await h.advance(3_000, 1000);
    assert.equal(h.restarts.length, 1, 'restarted on the poll that saw 0 players');
    assert.ok((h.restarts[0] ?? Infinity) < 30_000, 'before the deadline');
    // The server takes its time to leave (its round, the stop timeout): it is gone only after the deadline.
    await h.advance(40_000, 1000);
    assert.is(h.restarts.length, 1, 'no second, forced restart');
    h.runner.serverGone();
    assert.equal(h.events.at(-1), {
      type: 'maintenance:done',
      key: 'alpha',
      kind: 'restart',
      how: 'done',
      at: START + 43_000,
    });
    h.runner.stop();
  },
);

policy('maintenance :: RoundEnd asks the server once and waits for it to leave', async () => {
  const h = harness({});
  h.runner.start(null, false);
  h.runner.requestRestart('RoundEnd');
  await h.advance(10_000, 1000);
  assert.is(h.asks, 1);
  assert.equal(h.restarts, []);
  assert.is(h.runner.status().pending?.waitingFor, 'round-end');
  assert.is(h.polls, 0, 'RoundEnd reads no player count');
  h.runner.stop();
});

policy('maintenance :: a found update follows When; a restart asked with Now goes at once', async () => {
  const h = harness({ When: 'Now' });
  h.runner.start(null, false);
  h.runner.updateChecked(false);
  assert.equal(h.restarts, [], 'no update, nothing to do');
  h.runner.updateChecked(true);
  assert.equal(h.restarts, [0]);
  assert.is(h.events[0]?.kind, 'update');
  h.runner.stop();
});

policy.run();

// ---

const holds = suite('maintenance holds and schedules');

holds('maintenance :: a hold defers a scheduled restart, and its expiry releases it', async () => {
  const h = harness({ RestartSchedule: '*/10 * * * * *', TimeZone: 'UTC', When: 'Now' });
  h.runner.start(null, false);
  assert.is(h.runner.status().nextRestart, iso(START + 10_000));
  h.runner.hold(25_000, 'tournament');
  await h.advance(10_000, 1000);
  assert.equal(h.restarts, [], 'held');
  const s = h.runner.status();
  assert.is(s.pending?.source, 'schedule');
  assert.is(s.pending?.waitingFor, 'hold');
  assert.equal(s.hold, { reason: 'tournament', since: iso(START), until: iso(START + 25_000) });
  await h.advance(14_000, 1000);
  assert.equal(h.restarts, [], 'still held; later fires add nothing while one is pending');
  await h.advance(2_000, 1000);
  assert.equal(h.restarts, [25_000], 'the hold ran out: restarted at once (When: Now)');
  assert.is(h.runner.status().hold, null);
  assert.equal(
    h.events.map((e) => [e.type, e.kind, e.how ?? e.when ?? e.reason]),
    [
      ['maintenance:pending', 'hold', 'tournament'],
      ['maintenance:pending', 'scheduled-restart', 'Now'],
      ['maintenance:done', 'hold', 'expired'],
    ],
  );
  h.runner.stop();
});

holds('maintenance :: a restart asked for with ?when= is not held; release ends a hold early', async () => {
  const h = harness({ When: 'Now' });
  h.runner.start(null, false);
  h.runner.hold(60_000, 'event');
  h.runner.updateChecked(true);
  assert.equal(h.restarts, [], 'a found update waits');
  assert.is(h.runner.release(), true);
  assert.equal(h.restarts, [0], 'released: it goes');
  assert.is(h.runner.release(), false, 'nothing left to release');
  h.runner.serverGone();
  h.runner.hold(60_000, 'event');
  h.runner.requestRestart('Now');
  assert.equal(h.restarts, [0, 0], "a person's restart goes through a hold");
  h.runner.stop();
});

holds('maintenance :: a held update says the provider has it staged', () => {
  const h = harness({ When: 'Now' });
  h.runner.start(null, false);
  assert.is(h.runner.status().staged, null);
  h.runner.hold(60_000, 'event');
  h.staged = '42';
  h.runner.updateChecked(true);
  const s = h.runner.status();
  assert.equal([s.pending?.action, s.pending?.waitingFor, s.staged], ['update', 'hold', '42']);
  assert.equal(h.restarts, [], 'the install waits');
  h.runner.stop();
});

holds('maintenance :: a crash during a hold keeps a found update pending until the hold ends', async () => {
  const h = harness({ When: 'Now' });
  h.runner.start(null, false);
  h.runner.hold(10_000, 'event');
  h.runner.updateChecked(true);
  assert.is(h.runner.installsHeld(), true, 'the machine relaunches a crashed server on the installed build');
  h.runner.serverGone();
  assert.equal([h.runner.status().pending?.action, h.runner.status().pending?.waitingFor], ['update', 'hold']);
  await h.advance(11_000, 1000);
  assert.equal(h.restarts, [10_000], 'the hold ran out: the update goes (When: Now)');
  assert.is(h.runner.installsHeld(), false);
  h.runner.serverGone();
  assert.is(h.runner.status().pending, null);
  assert.equal(
    h.events.filter((e) => e.kind === 'update').map((e) => [e.type, e.how ?? e.when]),
    [
      ['maintenance:pending', 'Now'],
      ['maintenance:done', 'done'],
    ],
  );
  h.runner.stop();
});

holds('maintenance :: a launch with an update still pending waits for the hold (after a crash)', () => {
  const h = harness({ RestartSchedule: '*/10 * * * * *', TimeZone: 'UTC', When: 'Now' });
  h.runner.start(null, false);
  h.runner.launched(true);
  assert.is(h.runner.status().pending, null, 'unheld: the launch went through the install');
  h.runner.hold(60_000, 'event');
  h.clock.increment(10_000);
  assert.is(h.runner.status().pending?.source, 'schedule');
  // An update is found (the pending restart stays), then the server crashes and comes back without it.
  h.runner.updateChecked(true);
  h.runner.serverGone();
  h.runner.launched(true);
  const s = h.runner.status();
  assert.equal([s.pending?.action, s.pending?.waitingFor], ['update', 'hold']);
  assert.equal(h.restarts, []);
  h.runner.stop();
});

holds("maintenance :: a person's restart during a hold installs the held update: done at its launch", () => {
  const h = harness({ When: 'Now' });
  h.runner.start(null, false);
  h.runner.hold(60_000, 'event');
  h.runner.updateChecked(true);
  // The server goes for the restart; the update is still held until the launch shows it installed.
  h.runner.serverGone();
  assert.is(h.runner.status().pending?.action, 'update');
  h.runner.launched(false);
  assert.is(h.runner.status().pending, null);
  assert.equal(h.events.at(-1), { type: 'maintenance:done', key: 'alpha', kind: 'update', how: 'done', at: START });
  h.runner.release();
  assert.equal(h.restarts, [], 'nothing left for the hold to let through');
  h.runner.stop();
});

holds('maintenance :: an update found while held and no server runs waits for the hold', () => {
  const h = harness({ When: 'Now' });
  h.runner.start(null, false);
  h.live = false;
  h.runner.updateChecked(true);
  assert.is(h.runner.status().pending, null, 'unheld: the next launch installs it');
  h.runner.hold(60_000, 'event');
  h.runner.updateChecked(true);
  assert.equal([h.runner.status().pending?.action, h.runner.status().pending?.waitingFor], ['update', 'hold']);
  h.runner.stop();
});

holds('maintenance :: a restart asked with ?when= of an instance without a server is done at once', () => {
  const h = harness({});
  h.live = false;
  h.runner.start(null, false);
  h.runner.requestRestart('Empty');
  assert.equal(h.restarts, [0]);
  assert.is(h.runner.status().pending, null, 'nothing waits');
  assert.is(h.polls, 0);
  h.runner.stop();
});

holds('maintenance :: UpdateSchedule asks for checks; a scheduled restart skips a stopped server', async () => {
  const h = harness({ UpdateSchedule: '*/2 * * * * *', RestartSchedule: '*/3 * * * * *', TimeZone: 'UTC' });
  h.live = false;
  h.runner.start(null, false);
  await h.advance(6_000, 500);
  assert.is(h.checks, 3);
  assert.is(h.runner.status().pending, null, 'nothing to restart');
  assert.is(h.runner.nextScheduled(), START + 8_000);
  h.runner.stop();
});

holds('maintenance :: a config reload takes the new schedules at once', () => {
  const h = harness({ RestartSchedule: '0 6 * * *', TimeZone: 'UTC' });
  h.runner.start(null, false);
  assert.is(h.runner.status().nextRestart, '2026-11-26T06:00:00.000Z');
  h.settings = {
    ...h.settings,
    RestartSchedule: '30 13 * * *',
    TimeZone: 'Europe/Berlin',
    UpdateSchedule: '0 * * * *',
  };
  h.runner.reschedule();
  assert.is(h.runner.status().nextRestart, '2026-11-25T12:30:00.000Z', '13:30 in Berlin');
  assert.is(h.runner.status().nextUpdateCheck, '2026-11-25T13:00:00.000Z');
  h.settings = { ...h.settings, RestartSchedule: undefined, UpdateSchedule: undefined };
  h.runner.reschedule();
  assert.is(h.runner.nextScheduled(), null);
  h.runner.stop();
});

holds('maintenance :: a saved plan: the hold stays; a pending action stays only with an adopted server', () => {
  const plan: MaintenancePlan = {
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
  const fresh = harness({});
  fresh.runner.start(plan, false);
  assert.is(fresh.runner.status().pending, null, 'the daemon restart relaunched the server');
  assert.is(fresh.runner.status().hold?.reason, 'x');
  fresh.runner.stop();
  const adopted = harness({});
  adopted.runner.start(plan, true);
  assert.is(adopted.runner.status().pending?.waitingFor, 'hold');
  adopted.runner.stop();
  // A shutdown the previous daemon asked for, and did not see through, is asked for again.
  const carried = harness({});
  carried.runner.start({ pending: { ...plan.pending!, when: 'Now', carried: true }, hold: null }, true);
  assert.equal(carried.restarts, [0]);
  carried.runner.stop();
});

holds.run();
