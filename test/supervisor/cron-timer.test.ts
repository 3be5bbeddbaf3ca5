/**
 * The cron timer (src/supervisor/cron-timer.ts) on a simulated clock: a fire further off than a Node timer can wait,
 * a lead before each time, and fires missed during a stall run once.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SimulatedClock } from 'xstate';
import { cronTimer } from '../../src/supervisor/cron-timer.ts';

const test = suite('cron timer');
const DAY = 86_400_000;
const START = Date.parse('2026-01-15T00:00:00Z');

function timer(schedule: string, leadMs = 0) {
  const clock = new SimulatedClock();
  clock.set(START);
  const fires: string[] = [];
  const t = cronTimer({
    schedule,
    timeZone: 'UTC',
    leadMs,
    fire: () => fires.push(new Date(clock.now()).toISOString()),
    broken: (err) => assert.unreachable(String(err)),
    clock,
  });
  return { clock, fires, t };
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

test.run();
