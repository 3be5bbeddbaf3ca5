import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Bus, createBus, NOTICE_KINDS } from '../../src/bus.ts';
import { parseRetryAfter } from '../../src/notify/destinations/http.ts';
import { createNotifier, type NotifierOptions } from '../../src/notify/notifier.ts';
import type { Route } from '../../src/notify/routes.ts';
import { freePort, waitFor, within } from '../_support/env.ts';
import { recorder } from '../_support/fixture-servers.ts';
import { captureLog } from '../_support/recording-logger.ts';

const alert = (bus: Bus, message: string) =>
  bus.emit('instance:alert', { key: 'alpha', kind: 'crash', message, at: Date.now() });
const base = { retries: 2, retryBaseMs: 20, timeoutMs: 10_000, maxAnswerBytes: 64_000 }; // a loopback send times out only when hung
/** `Notification.ChatWebhook`: every kind, every instance, as text. */
const chatWebhook = (url: string): Route => ({
  label: 'Notification.ChatWebhook',
  target: { type: 'Webhook', url },
  events: new Set(NOTICE_KINDS),
  instances: null,
  format: 'Text',
});
const createWebhookNotifier = ({ url, ...o }: { url: string } & Omit<NotifierOptions, 'routes'>) =>
  createNotifier({ routes: [chatWebhook(url)], ...o });

const hook = suite('webhook');

interface Hooked {
  srv: Awaited<ReturnType<typeof recorder>>;
  bus: Bus;
  log: ReturnType<typeof captureLog>;
}

/**
 * A recording receiver and a notifier posting to its `path` (options over `base`); `run` gets both, and both are
 * stopped afterwards whatever happens.
 */
async function withNotifier(
  respond: Parameters<typeof recorder>[0],
  opts: { path?: string } & Partial<Omit<NotifierOptions, 'routes'>>,
  run: (t: Hooked) => Promise<void>,
): Promise<void> {
  const { path = '', ...over } = opts;
  const srv = await recorder(respond);
  const bus = createBus();
  const log = captureLog();
  const n = createWebhookNotifier({ ...base, url: `${srv.url}${path}`, bus, log, ...over });
  try {
    await run({ srv, bus, log });
  } finally {
    await n.stop();
    await srv.close();
  }
}

hook('webhook :: posts {content, allowed_mentions} as JSON, in order', async () => {
  await withNotifier(
    () => ({ status: 204 }),
    { path: 'api/webhooks/1/secret' },
    async ({ srv, bus }) => {
      alert(bus, 'Server `alpha` exited with signal SIGKILL.');
      alert(bus, 'second');
      await waitFor('two posts', () => srv.requests.length === 2);
      const [first, second] = srv.requests;
      assert.is(first?.method, 'POST');
      assert.is(first?.url, '/api/webhooks/1/secret');
      assert.is(first?.headers['content-type'], 'application/json');
      assert.equal(JSON.parse(first?.body ?? ''), {
        content: 'Server `alpha` exited with signal SIGKILL.',
        allowed_mentions: { parse: [] },
      });
      assert.is((JSON.parse(second?.body ?? '') as { content: string }).content, 'second');
    },
  );
});

hook('webhook :: 429 waits for Retry-After, not the (much longer) back-off', async () => {
  await withNotifier(
    (_r, i) => (i === 1 ? { status: 429, headers: { 'Retry-After': '0.3' } } : { status: 204 }),
    { retryBaseMs: 30_000 },
    async ({ srv, bus, log }) => {
      alert(bus, 'rate limited');
      // Within 10 s: not after the 30 s back-off.
      await waitFor('retried', () => srv.requests.length === 2, 10_000);
      const retry = log.lines.find((l) => l.startsWith('debug chat webhook: retrying'));
      assert.match(retry ?? '', /"problem":"HTTP 429".*"delayMs":300\b/, 'the wait set is the Retry-After');
      assert.is(srv.requests[1]?.body, srv.requests[0]?.body);
    },
  );
});

hook('webhook :: 5xx is retried `retries` times, then the message is dropped and the next one still goes', async () => {
  let failing = true;
  await withNotifier(
    () => ({ status: failing ? 503 : 204 }),
    {},
    async ({ srv, bus, log }) => {
      alert(bus, 'doomed');
      await waitFor('gave up', () => log.lines.some((l) => l.startsWith('warn chat webhook refused')));
      assert.is(srv.requests.length, 3, 'one attempt plus two retries');
      assert.match(log.lines.find((l) => l.startsWith('warn')) ?? '', /HTTP 503/);
      assert.not.match(
        log.lines.join('\n'),
        new RegExp(String(srv.port)),
        'the webhook URL (it holds a token) is never logged',
      );
      failing = false;
      alert(bus, 'next');
      await waitFor('next delivered', () => srv.requests.length === 4);
      // One queue, in order: a retry of `next` would be sent before this one.
      alert(bus, 'after');
      await waitFor('after delivered', () => srv.requests.some((r) => r.body.includes('"after"')), 10_000);
      assert.is(srv.requests.length, 5, 'a 2xx is not retried');
    },
  );
});

hook('webhook :: a 4xx other than 429 is not retried', async () => {
  await withNotifier(
    () => ({ status: 400 }),
    {},
    async ({ srv, bus, log }) => {
      alert(bus, 'bad');
      await waitFor('gave up', () => log.lines.some((l) => l.startsWith('warn chat webhook refused')));
      assert.is(srv.requests.length, 1);
    },
  );
});

hook('webhook :: a receiver that is down never throws into the emitter; stop() is bounded', async () => {
  const bus = createBus();
  const log = captureLog();
  const n = createWebhookNotifier({ ...base, url: `http://127.0.0.1:${await freePort()}/hook`, bus, log });
  assert.not.throws(() => alert(bus, 'nobody listens'));
  await waitFor('gave up', () => log.lines.some((l) => l.startsWith('warn chat webhook refused')));
  await within(10_000, 'stop()', n.stop()); // only a hang fails this
  assert.not.throws(() => alert(bus, 'after stop'), 'no longer subscribed, still no throw');
});

hook('webhook :: a slow receiver does not block the emitter; the queue is bounded (oldest dropped)', async () => {
  await withNotifier(
    () => ({ status: 204, delayMs: 400 }),
    { maxQueue: 3 },
    async ({ srv, bus, log }) => {
      for (let i = 0; i < 10; i++) alert(bus, `m${i}`);
      // Each answer takes 400 ms: an emit that waited for the receiver would return after it had received some.
      assert.is(srv.requests.length, 0, 'emit returned without waiting: nothing was even received yet');
      await waitFor('delivered what is kept', () => srv.requests.length === 4, 10_000);
      const contents = srv.requests.map((r) => (JSON.parse(r.body) as { content: string }).content);
      assert.equal(contents, ['m0', 'm7', 'm8', 'm9'], 'm0 was in flight; m1..m6 were dropped as the oldest');
      assert.ok(log.lines.some((l) => l.includes('queue full')));
    },
  );
});

hook('webhook :: stop() waits only briefly for a stuck send, then gives up', async () => {
  // Never answers: stop() can only return by giving up (within the 20 s send timeout, 10 s catches a hang).
  const srv = await recorder(() => null);
  const bus = createBus();
  const log = captureLog();
  const n = createWebhookNotifier({ ...base, timeoutMs: 20_000, url: srv.url, bus, log, stopWaitMs: 200 });
  try {
    alert(bus, 'stuck');
    alert(bus, 'queued');
    await waitFor('in flight', () => srv.requests.length === 1);
    await within(10_000, 'stop() with a send stuck', n.stop());
    assert.ok(log.lines.some((l) => l.includes('gave up on unsent messages')));
  } finally {
    await srv.close();
  }
});

hook('webhook :: Retry-After parses seconds and HTTP dates', () => {
  assert.is(parseRetryAfter('2'), 2000);
  assert.is(parseRetryAfter('0.25'), 250);
  assert.is(parseRetryAfter(new Date(10_000 + 3000).toUTCString(), 10_000), 3000);
  assert.is(parseRetryAfter(new Date(0).toUTCString(), 10_000), 0);
  assert.is(parseRetryAfter('soon'), null);
  assert.is(parseRetryAfter(null), null);
});

hook.run();
