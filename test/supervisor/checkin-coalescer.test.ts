import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { coalesceWindowMs, createCheckinCoalescer } from '../../src/supervisor/checkin-coalescer.ts';
import type { TimerClock } from '../../src/supervisor/timer-clock.ts';

/** A manual clock: timers fire only when the test advances time past them. */
function manualClock() {
  let now = 1_000_000;
  let timers: { at: number; fn: () => void; id: number }[] = [];
  let nextId = 1;
  const clock: TimerClock = {
    now: () => now,
    setTimeout: (fn, ms) => {
      const id = nextId++;
      timers.push({ at: now + ms, fn, id });
      return id;
    },
    clearTimeout: (id) => {
      timers = timers.filter((t) => t.id !== id);
    },
  };
  const advance = (ms: number) => {
    const until = now + ms;
    for (;;) {
      const due = timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      timers = timers.filter((t) => t !== due);
      now = due.at;
      due.fn();
    }
    now = until;
  };
  return { clock, advance, pending: () => timers.length, now: () => now };
}

function setup(windowMs = 100) {
  const c = manualClock();
  const forwarded: { launchId: number; at: number }[] = [];
  const coalescer = createCheckinCoalescer(
    () => windowMs,
    (launchId) => forwarded.push({ launchId, at: c.now() }),
    c.clock,
  );
  /** The launch ids forwarded so far, in order. */
  const launchIds = () => forwarded.map((f) => f.launchId);
  return { ...c, forwarded, launchIds, coalescer };
}

const test = suite('checkin coalescer');

test('checkin coalescer :: the first check-in goes through at once', () => {
  const h = setup();
  h.coalescer.checkin(1);
  assert.equal(h.forwarded, [{ launchId: 1, at: 1_000_000 }]);
  assert.is(h.pending(), 0);
});

test('checkin coalescer :: a burst inside the window is handed on once, when the window ends', () => {
  const h = setup(100);
  h.coalescer.checkin(1);
  for (let i = 0; i < 1000; i++) {
    h.advance(0.05);
    h.coalescer.checkin(1);
  }
  assert.is(h.forwarded.length, 1, 'nothing more inside the window');
  h.advance(100);
  assert.equal(
    h.forwarded.map((f) => f.at - 1_000_000),
    [0, 100],
    'the held one at the end of the window',
  );
  h.advance(1000);
  assert.is(h.forwarded.length, 2, 'nothing is repeated');
});

test('checkin coalescer :: never more than one hand-on per window under a steady flood, never later than a window', () => {
  const h = setup(100);
  const checkins: number[] = [];
  for (let i = 0; i < 2000; i++) {
    checkins.push(h.now());
    h.coalescer.checkin(7);
    h.advance(1);
  }
  h.advance(200);
  const at = h.forwarded.map((f) => f.at);
  for (let i = 1; i < at.length; i++) assert.ok((at[i] ?? 0) - (at[i - 1] ?? 0) >= 100, 'at least a window apart');
  // Every check-in is followed by a hand-on within one window: the hang deadline is at most a window late.
  for (const t of checkins)
    assert.ok(
      at.some((a) => a >= t && a - t <= 100),
      `check-in at ${t} handed on within the window`,
    );
});

test('checkin coalescer :: a check-in after a quiet window goes through at once', () => {
  const h = setup(100);
  h.coalescer.checkin(1);
  h.advance(150);
  h.coalescer.checkin(1);
  assert.equal(
    h.forwarded.map((f) => f.at - 1_000_000),
    [0, 150],
  );
});

test('checkin coalescer :: reset (a new launch) drops the held check-in and lets the next one through at once', () => {
  const h = setup(100);
  h.coalescer.checkin(1);
  h.advance(10);
  h.coalescer.checkin(1);
  h.coalescer.reset();
  assert.is(h.pending(), 0, 'the timer is cleared');
  h.coalescer.checkin(2);
  h.advance(500);
  assert.equal(h.launchIds(), [1, 2]);
});

test('checkin coalescer :: the held check-in names the newest launch id it saw', () => {
  const h = setup(100);
  h.coalescer.checkin(1);
  h.coalescer.checkin(1);
  h.coalescer.checkin(2);
  h.advance(100);
  assert.equal(h.launchIds(), [1, 2]);
});

test('checkin coalescer :: the window is 1 % of the timeout, at most 250 ms', () => {
  assert.is(coalesceWindowMs(90_000), 250);
  assert.is(coalesceWindowMs(5_000), 50);
  assert.is(coalesceWindowMs(1_000), 10);
  assert.is(coalesceWindowMs(50), 0);
});

test.run();
