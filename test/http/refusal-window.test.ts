import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OTHER_SOURCES, type RefusalSummary, RefusalWindow, sourceOf } from '../../src/http/refusal-window.ts';

function windowAt(maxSources?: number) {
  let now = 1_000_000;
  const summaries: RefusalSummary[] = [];
  const w = new RefusalWindow({
    everyMs: () => 60_000,
    onSummary: (s) => summaries.push(s),
    maxSources,
    now: () => now,
  });
  return { w, summaries, advance: (ms: number) => (now += ms) };
}

const win = suite('refusal-window');

win('refusal-window :: the first from a source in full, the rest in one summary per interval', () => {
  const { w, summaries, advance } = windowAt();
  try {
    assert.is(w.admit('10.0.0.1'), true);
    for (let i = 0; i < 1233; i++) assert.is(w.admit('10.0.0.1'), false);
    assert.is(w.admit('10.0.0.1'), false);
    assert.is(w.admit('10.0.0.2'), true, 'another source has its own first');
    advance(60_000);
    w.flush();
    assert.equal(
      summaries.map((s) => s.text),
      ['1,234 refused requests from 10.0.0.1 in the last 60 s'],
    );
    // Still going on: summarised again; then a quiet interval forgets the source.
    w.admit('10.0.0.1');
    advance(30_000);
    w.flush();
    assert.is(summaries.at(-1)?.text, '1 refused request from 10.0.0.1 in the last 30 s');
    advance(60_000);
    w.flush();
    assert.is(summaries.length, 2, 'nothing to say for a quiet interval');
    assert.is(w.admit('10.0.0.1'), true, 'a source quiet for an interval is written in full again');
  } finally {
    w.stop();
  }
});

win('refusal-window :: the table is bounded: sources past the limit share one bucket, only summarised', () => {
  const { w, summaries } = windowAt(3);
  try {
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) assert.is(w.admit(a), true);
    for (let i = 4; i < 1000; i++) assert.is(w.admit(`10.0.${i >> 8}.${i & 255}`), false);
    w.flush();
    assert.equal(
      summaries.map((s) => [s.source, s.count]),
      [[OTHER_SOURCES, 996]],
    );
  } finally {
    w.stop();
  }
});

win('refusal-window :: IPv6 clients count by their /64; IPv4-mapped addresses as IPv4', () => {
  assert.is(sourceOf('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
  assert.is(sourceOf('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.is(sourceOf('2001:0db8::1'), '2001:db8:0:0::/64');
  assert.is(sourceOf('::1'), '0:0:0:0::/64');
  assert.is(sourceOf('::ffff:127.0.0.1'), '127.0.0.1');
  assert.is(sourceOf('127.0.0.1'), '127.0.0.1');
  assert.is(sourceOf(undefined), 'unknown');
  const { w } = windowAt();
  try {
    assert.is(w.admit('2001:db8:1:2::1'), true);
    assert.is(w.admit('2001:db8:1:2::ffff'), false, 'the same /64');
  } finally {
    w.stop();
  }
});

win.run();
