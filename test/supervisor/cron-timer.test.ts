/**
 * The cron timer (src/supervisor/cron-timer.ts) on a simulated clock: a fire further off than a Node timer can wait,
 * a lead before each time, fires missed during a stall run once, and a step of the wall clock (timers wait on the
 * monotonic clock, the schedule reads the wall) moves the fire with it.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SimulatedClock } from 'xstate';
import { cronTimer, type TimerClock, WALL_CHECK_MS } from '../../src/supervisor/cron-timer.ts';

const test = suite('cron timer');
const DAY = 86_400_000;
const START = Date.parse('2026-01-15T00:00:00Z');

/** A simulated monotonic clock for the timers, and a wall clock `offset` ms from it that a test can step. */
function steppedClock() {
  const mono = new SimulatedClock();
  mono.set(START);
  const wall = { offset: 0 };
  const clock: TimerClock & { increment(ms: number): void } = {
    now: () => mono.now() + wall.offset,
    setTimeout: (fn, ms) => mono.setTimeout(fn, ms),
    clearTimeout: (handle) => mono.clearTimeout(handle as number),
    increment: (ms) => mono.increment(ms),
  };
  return { clock, wall };
}

function timer(schedule: string, leadMs = 0) {
  const { clock, wall } = steppedClock();
  const fires: string[] = [];
  const t = cronTimer({
    schedule,
    timeZone: 'UTC',
    leadMs,
    fire: () => fires.push(new Date(clock.now()).toISOString()),
    broken: (err) => assert.unreachable(String(err)),
    clock,
  });
  return { clock, wall, fires, t };
}

test('cron timer :: a yearly schedule fires once, 351 days ahead, past the longest Node timer', () => {
  const { clock, fires, t } = timer('0 0 1 1 *');
  assert.is(t.next, Date.parse('2027-01-01T00:00:00Z'));
  for (let d = 0; d < 400; d++) clock.increment(DAY);
  assert.equal(fires, ['2027-01-01T00:00:00.000Z']);
  assert.is(t.next, Date.parse('2028-01-01T00:00:00Z'));
  t.stop();
});

test('cron timer :: a lead fires that long before each time; fires missed in a stall run once', () => {
  const { clock, fires, t } = timer('0 * * * *', 5 * 60_000);
  clock.increment(55 * 60_000);
  assert.equal(fires, ['2026-01-15T00:55:00.000Z']);
  clock.increment(5 * 3_600_000);
  assert.is(fires.length, 2, 'one run for the five hours the clock jumped');
  assert.is(t.next, Date.parse('2026-01-15T06:55:00Z'));
  t.stop();
  clock.increment(DAY);
  assert.is(fires.length, 2, 'nothing after stop');
});

test('cron timer :: a step of the wall clock: forward, the skipped fire runs once within a check; back, none runs early', () => {
  const { clock, wall, fires, t } = timer('0 * * * *');
  clock.increment(50 * 60_000);
  assert.equal(fires, []);
  // 00:50 becomes 01:50: the 01:00 fire was stepped past; the monotonic timer alone would wait 10 more minutes.
  wall.offset = 3_600_000;
  clock.increment(WALL_CHECK_MS);
  assert.equal(fires, ['2026-01-15T01:50:10.000Z'], 'one run, within a check of the step');
  assert.is(t.next, Date.parse('2026-01-15T02:00:00Z'));
  // Back two hours, 01:51 becomes 23:51 of the day before: nothing fires until the wall clock is at 02:00 again.
  clock.increment(60_000);
  wall.offset -= 2 * 3_600_000;
  for (let m = 0; m < 2 * 60 + 8; m++) clock.increment(60_000);
  assert.is(fires.length, 1, 'no fire while the wall clock is before 02:00');
  for (let m = 0; m < 2; m++) clock.increment(60_000);
  assert.is(fires.length, 2);
  // The simulated clock runs a due timer at the end of its step (a minute here).
  const late = Date.parse(fires[1] ?? '') - Date.parse('2026-01-15T02:00:00Z');
  assert.ok(late >= 0 && late < 60_000, `at 02:00 by the wall clock (${fires[1]})`);
  t.stop();
});

test.run();
