import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Notice } from '../../src/bus.ts';
import { noticeFromDone, noticeFromPending } from '../../src/notify/notices.ts';
import { clip, embedOf, formatUptime, LIMITS, payloadOf } from '../../src/notify/payload.ts';

const test = suite('notify :: payloads');
const chars = (s: string) => [...s].length;

test('payload :: an oversized notice stays within every Discord embed limit', () => {
  const n: Notice = {
    key: 'alpha',
    kind: 'crash',
    title: 'T'.repeat(400),
    message: 'm'.repeat(9000),
    reason: 'r'.repeat(3000),
    fields: Array.from({ length: 40 }, (_, i) => ({ name: `${i}`.repeat(300), value: '😀'.repeat(2000) })),
    at: 0,
  };
  const e = embedOf(n);
  assert.ok(chars(e.title) <= LIMITS.title);
  assert.ok(chars(e.description) <= LIMITS.description);
  assert.ok(e.fields.length <= LIMITS.fields);
  for (const f of e.fields) assert.ok(chars(f.name) <= LIMITS.name && chars(f.value) <= LIMITS.value);
  const total =
    chars(e.title) + chars(e.description) + e.fields.reduce((s, f) => s + chars(f.name) + chars(f.value), 0);
  assert.ok(total <= LIMITS.total, `total ${total}`);
  assert.is(e.fields[0]?.name, 'Instance', 'the instance is kept first');
  assert.not.match(JSON.stringify(e), /\\ud83d"/i, 'no surrogate pair cut in half');
  const text = payloadOf(n, 'Text');
  assert.ok('content' in text && chars(text.content) <= LIMITS.content);
  assert.equal(text.allowed_mentions, { parse: [] });
});

test('payload :: empty fields are left out; clip and uptime read naturally', () => {
  const e = embedOf({
    key: 'a',
    kind: 'hold',
    message: 'x',
    reason: '',
    fields: [{ name: 'Until', value: ' ' }],
    at: 0,
  });
  assert.equal(
    e.fields.map((f) => f.name),
    ['Instance'],
  );
  assert.is(clip('abcdef', 4), 'abc…');
  assert.is(clip('abc', 4), 'abc');
  const uptimes = { '45 s': 45_000, '12 min': 720_000, '3 h 5 min': 11_100_000, '2 d 4 h': 187_200_000 };
  for (const [text, ms] of Object.entries(uptimes)) assert.is(formatUptime(ms), text);
});

test('payload :: maintenance: pending and done read as one announcement each', () => {
  const at = Date.UTC(2026, 10, 25, 6, 0, 0);
  const pending = noticeFromPending({ key: 'main', kind: 'update', when: 'RoundEnd', deadline: at + 3_600_000, at });
  assert.is(pending.kind, 'scheduled-restart');
  assert.is(
    pending.message,
    'Server `main` has an update waiting and will restart when its round ends, at the latest at 07:00 UTC on 2026-11-25.',
  );
  const forced = noticeFromDone({ key: 'main', kind: 'scheduled-restart', how: 'forced', at });
  assert.is(
    forced.message,
    'Server `main` restarted for its schedule: forced, its MaxDelayMinutes ran out, so it was shut down gracefully.',
  );
  assert.is(forced.title, 'Scheduled restart forced');
  // The daemon's own restart (a memory limit) says why instead of "(requested)".
  const reason = 'memory 2.1 GB over MemoryLimitMB 2048';
  const memory = noticeFromPending({ key: 'main', kind: 'restart', when: 'RoundEnd', deadline: at, reason, at });
  assert.is(
    memory.message,
    'Server `main` will restart (memory 2.1 GB over MemoryLimitMB 2048) when its round ends, at the latest at 06:00 UTC on 2026-11-25.',
  );
  assert.is(memory.reason, reason);
  const asked = noticeFromPending({
    key: 'main',
    kind: 'restart',
    when: 'Empty',
    deadline: at,
    by: 'by mo from 10.0.0.5',
    at,
  });
  assert.match(
    asked.message,
    /^Server `main` will restart \(requested by mo from 10\.0\.0\.5\) as soon as no players are on/,
  );
  const update = noticeFromPending({ key: 'main', kind: 'update', when: 'Empty', by: 'by mo from 10.0.0.5', at });
  assert.match(
    update.message,
    /^Server `main` has an update waiting \(requested by mo from 10\.0\.0\.5\) and will restart as/,
  );
  const released = noticeFromDone({ key: 'main', kind: 'hold', how: 'released', at });
  assert.equal(
    [released.kind, released.message],
    ['hold', 'The hold on server `main` is released; maintenance that waited goes ahead.'],
  );
});

test.run();
