import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { noticeFromBlocked, noticeFromUnblocked } from '../../src/notify/notices.ts';
import { payloadOf } from '../../src/notify/payload.ts';

const test = suite('notify launch-blocked');

const blocked = (attempts: number, retryMs = 8000) => ({
  key: 'alpha',
  kind: 'resources' as const,
  message: 'the watchdog is out of file descriptors (EMFILE)',
  attempts,
  retryMs,
  at: 1,
});

test('launch-blocked :: the first blocked launch says what and when it is retried; the retries say nothing', () => {
  const n = noticeFromBlocked(blocked(1));
  assert.is(
    n?.message,
    'cannot launch `alpha`: the watchdog is out of file descriptors (EMFILE); retrying in 8 s (with back-off, until it works).',
  );
  assert.is(n?.kind, 'launch-blocked');
  for (const attempts of [2, 3, 50]) assert.is(noticeFromBlocked(blocked(attempts)), null, `attempt ${attempts}`);
});

test('launch-blocked :: the end of an episode is told, and both render as chat payloads', () => {
  const n = noticeFromUnblocked({ key: 'alpha', kind: 'port', attempts: 3, at: 2 });
  assert.is(n.message, '`alpha` launched again after 3 blocked attempts.');
  assert.match(JSON.stringify(payloadOf(n, 'Embed', 'Alpha')), 'Launched again');
  const first = noticeFromBlocked(blocked(1));
  assert.ok(first);
  assert.match(JSON.stringify(payloadOf(first, 'Text', 'Alpha')), 'cannot launch');
});

test.run();
