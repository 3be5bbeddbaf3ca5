import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type AlertEvent, alertMessage, formatDelay, requester } from '../../src/notify/messages.ts';

const alert = (e: Partial<AlertEvent> & Pick<AlertEvent, 'kind'>): AlertEvent => ({
  type: 'alert',
  exit: null,
  detail: null,
  failures: 0,
  backoffMs: null,
  ...e,
});

/** The message for `alpha` failing to start after 3 attempts. */
const failingAlpha = (e: Partial<AlertEvent>) => alertMessage('alpha', alert({ kind: 'failing', failures: 3, ...e }));

const messages = suite('messages');

messages('messages :: a crash names the key and the signal or exit code', () => {
  assert.is(
    alertMessage('alpha', alert({ kind: 'crash', exit: { code: null, signal: 'SIGKILL' } })),
    'Server `alpha` exited with signal SIGKILL. Check server logs for possible causes.',
  );
  assert.is(
    alertMessage('alpha', alert({ kind: 'crash', exit: { code: 3, signal: null } })),
    'Server `alpha` exited with non-clean exit code 3. Check server logs for possible causes.',
  );
  assert.is(
    alertMessage('beta', alert({ kind: 'crash' })),
    'Server `beta` exited unexpectedly. Check server logs for possible causes.',
  );
});

messages('messages :: the reason in words, when the machine has one: quoted, one line, bounded', () => {
  assert.is(
    failingAlpha({ detail: 'cannot launch /srv/bin/x: ENOENT (file not found) — check RunCommand' }),
    'Server `alpha` is failing to start (3 attempts, last: could not be launched: `cannot launch /srv/bin/x: ENOENT (file not found) — check RunCommand`), needs manual intervention or update.',
  );
  assert.is(
    failingAlpha({
      exit: { code: 1, signal: null },
      detail: 'Error: listen EADDRINUSE: address already in use 127.0.0.1:1212',
    }),
    'Server `alpha` is failing to start (3 attempts, last: exit code 1, `Error: listen EADDRINUSE: address already in use 127.0.0.1:1212`), needs manual intervention or update.',
  );
  assert.is(
    alertMessage('alpha', alert({ kind: 'crash', exit: { code: 134, signal: null }, detail: 'fatal: `oops`\n  at x' })),
    "Server `alpha` exited with non-clean exit code 134. Last output: `fatal: 'oops' at x`. Check server logs for possible causes.",
  );
  const long = alertMessage(
    'alpha',
    alert({ kind: 'crash', exit: { code: 1, signal: null }, detail: 'x'.repeat(500) }),
  );
  assert.ok(long.includes(`\`${'x'.repeat(197)}...\``), 'cut at 200 characters');
});

messages('messages :: hang, failing, stopped, crash-loop', () => {
  assert.is(
    alertMessage('alpha', alert({ kind: 'hang' })),
    'Server `alpha` timed out and will be killed. Check server logs for possible causes.',
  );
  assert.is(
    alertMessage('alpha', alert({ kind: 'failing', failures: 3, exit: { code: 1, signal: null } })),
    'Server `alpha` is failing to start (3 attempts, last: exit code 1), needs manual intervention or update.',
  );
  assert.is(
    alertMessage('alpha', alert({ kind: 'failing', failures: 3 })),
    'Server `alpha` is failing to start (3 attempts, last: could not be launched), needs manual intervention or update.',
  );
  assert.is(alertMessage('alpha', alert({ kind: 'stopped' })), 'Server `alpha` was stopped on request.');
  assert.is(
    alertMessage('alpha', alert({ kind: 'stopped' }), requester('alpha', 'boss', '10.0.0.5')),
    'Server `alpha` was stopped on request (by boss from 10.0.0.5).',
  );
  assert.is(requester('alpha', 'alpha', '127.0.0.1'), 'with its API token from 127.0.0.1');
  assert.is(requester('alpha', undefined, undefined), '');
  assert.is(
    alertMessage('alpha', alert({ kind: 'crash-loop', backoffMs: 4000 })),
    'Server `alpha` is crash-looping; restarting with back-off (next in 4 s).',
  );
  assert.is(
    alertMessage('alpha', alert({ kind: 'crash-loop' })),
    'Server `alpha` is crash-looping; restarting with back-off.',
  );
});

messages('messages :: delays read naturally', () => {
  const delays = { '800 ms': 800, '1.5 s': 1500, '60 s': 60_000, '2 min': 120_000, '2 min 30 s': 150_000 };
  for (const [text, ms] of Object.entries(delays)) assert.is(formatDelay(ms), text);
});

messages.run();
