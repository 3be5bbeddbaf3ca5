import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogWindow, OTHER_SOURCES, type WindowSummary } from '../../src/http/log-window.ts';
import { refusedSummary, sourceOf } from '../../src/http/refused.ts';

function windowAt(maxBuckets?: number, everyMs = 60_000) {
  let now = 1_000_000;
  const summaries: WindowSummary[] = [];
  const w = createLogWindow({
    everyMs: () => everyMs,
    onSummary: (s) => summaries.push(s),
    maxBuckets,
    now: () => now,
  });
  return { w, summaries, advance: (ms: number) => (now += ms) };
}

const win = suite('log-window');

win('log-window :: the first of a bucket in full, the rest in one summary per window', () => {
  const { w, summaries, advance } = windowAt();
  try {
    assert.is(w.admit('10.0.0.1'), true);
    for (let i = 0; i < 1233; i++) assert.is(w.admit('10.0.0.1'), false);
    assert.is(w.admit('10.0.0.1', 'the last'), false);
    assert.is(w.admit('10.0.0.2'), true, 'another bucket has its own first');
    advance(60_000);
    w.flush();
    assert.equal(summaries, [{ bucket: '10.0.0.1', count: 1234, seconds: 60, last: 'the last' }]);
    // Still going on: summarised again; then a quiet window forgets the bucket.
    w.admit('10.0.0.1');
    advance(30_000);
    w.flush();
    assert.equal(summaries.at(-1), { bucket: '10.0.0.1', count: 1, seconds: 30, last: undefined });
    advance(60_000);
    w.flush();
    assert.is(summaries.length, 2, 'nothing to say for a quiet window');
    assert.is(w.admit('10.0.0.1'), true, 'a bucket quiet for a window is written in full again');
  } finally {
    w.stop();
  }
});

win('log-window :: the table is bounded: buckets past the limit share one, only summarised', () => {
  const { w, summaries } = windowAt(3);
  try {
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) assert.is(w.admit(a), true);
    for (let i = 4; i < 1000; i++) assert.is(w.admit(`10.0.${i >> 8}.${i & 255}`), false);
    w.flush();
    assert.equal(
      summaries.map((s) => [s.bucket, s.count]),
      [[OTHER_SOURCES, 996]],
    );
  } finally {
    w.stop();
  }
});

win('log-window :: a window of 0 writes every event in full', () => {
  const { w, summaries } = windowAt(undefined, 0);
  for (let i = 0; i < 3; i++) assert.is(w.admit('alpha'), true);
  w.flush();
  assert.equal(summaries, []);
});

win('log-window :: refused requests: IPv6 clients count by their /64, IPv4-mapped as IPv4; the summary line', () => {
  assert.is(sourceOf('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
  assert.is(sourceOf('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.is(sourceOf('2001:0db8::1'), '2001:db8:0:0::/64');
  assert.is(sourceOf('::1'), '0:0:0:0::/64');
  assert.is(sourceOf('::ffff:127.0.0.1'), '127.0.0.1');
  assert.is(sourceOf('127.0.0.1'), '127.0.0.1');
  assert.is(sourceOf(undefined), 'unknown');
  assert.is(refusedSummary('10.0.0.1', 1234, 60), '1,234 refused requests from 10.0.0.1 in the last 60 s');
  assert.is(refusedSummary('10.0.0.1', 1, 30), '1 refused request from 10.0.0.1 in the last 30 s');
});

win.run();
