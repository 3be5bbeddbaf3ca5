import { createServer } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Bus, createBus, type Notice } from '../../src/bus.ts';
import type { NotificationSettings } from '../../src/config/sections/notification.ts';
import { createNotifier, type Notifier } from '../../src/notify/notifier.ts';
import { type Embed, KINDS } from '../../src/notify/payload.ts';
import { routesFrom } from '../../src/notify/routes.ts';
import { waitFor } from '../_support/env.ts';
import { captureLog } from '../_support/recording-logger.ts';
import { serveLoopback, startWebhookReceiver, type WebhookReceiver } from '../_support/webhook.ts';

const timing = { retries: 2, retryBaseMs: 20, timeoutMs: 10_000, maxAnswerBytes: 64_000 }; // a loopback send times out only when hung

/**
 * A receiver that records each request and answers it with `answer(n)` (n from 1) once `open()` holds (polled);
 * `close` drops open connections.
 */
async function gatedRecorder(
  open: () => boolean,
  answer: (n: number) => { status: number; headers?: Record<string, string> },
): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      requests.push(body);
      const { status, headers } = answer(requests.length);
      waitFor('the gate to open', open, 30_000).then(
        () => res.writeHead(status, headers).end(),
        () => res.destroy(),
      );
    });
  });
  const { url, close } = await serveLoopback(server, '/');
  return { url, requests, close };
}
const T0 = Date.UTC(2026, 10, 25, 6, 0, 0);

/** The embed of a received message (asserting there is exactly one and no text content beside it). */
function embedOf(m: WebhookReceiver['messages'][number] | undefined): Embed {
  const body = m?.body as { embeds?: Embed[]; content?: string; allowed_mentions?: unknown } | undefined;
  assert.ok(body, 'a message was received');
  assert.is(body.content, undefined, 'an embed message has no text content');
  assert.equal(body.allowed_mentions, { parse: [] }, 'mentions are off');
  assert.is(body.embeds?.length, 1);
  return body.embeds?.[0] as Embed;
}
const field = (e: Embed, name: string) => e.fields.find((f) => f.name === name)?.value;

/** Receivers, a bus and a notifier over `settings` (URLs filled in by `urls`), all stopped afterwards. */
async function withRoutes(
  receivers: number,
  settings: (urls: string[]) => NotificationSettings,
  run: (t: { bus: Bus; hooks: WebhookReceiver[]; log: ReturnType<typeof captureLog> }) => Promise<void>,
): Promise<void> {
  const hooks = await Promise.all(Array.from({ length: receivers }, () => startWebhookReceiver()));
  const bus = createBus();
  const log = captureLog();
  let notifier: Notifier | undefined;
  try {
    const routes = routesFrom(settings(hooks.map((h) => h.url)));
    const names = new Map([['alpha', 'Alpha Station']]);
    notifier = createNotifier({ routes, bus, log, nameOf: (k) => names.get(k), now: () => monotonic, ...timing });
    await run({ bus, hooks, log });
  } finally {
    await notifier?.stop();
    await Promise.all(hooks.map((h) => h.close()));
  }
}

/** The notifier's monotonic clock, which uptimes are measured on. */
let monotonic = 0;

const test = suite('notify :: routes and embeds');

test('routes :: embed: a crash after a launch carries title, description, red, timestamp and the documented fields', async () => {
  await withRoutes(
    1,
    ([url]) => ({ ChatWebhook: url, Format: 'Embed', Routes: [] }),
    async ({ bus, hooks: [hook] }) => {
      bus.emit('instance:launch', { key: 'alpha', pid: 1, launchId: 1, revision: 'r42', at: T0 });
      monotonic += 3_725_000;
      bus.emit('instance:alert', {
        key: 'alpha',
        kind: 'crash',
        message: 'Server `alpha` exited with signal SIGKILL. Check server logs for possible causes.',
        exit: { code: null, signal: 'SIGKILL' },
        at: T0 + 3_725_000,
      });
      await waitFor('the embed', () => hook?.messages.length === 1, 5000);
      const e = embedOf(hook?.messages[0]);
      assert.is(e.title, 'Crashed · Alpha Station (alpha)');
      assert.is(e.description, 'Server `alpha` exited with signal SIGKILL. Check server logs for possible causes.');
      assert.is(e.color, 0xe74c3c, 'red');
      assert.is(e.timestamp, new Date(T0 + 3_725_000).toISOString());
      assert.equal(
        e.fields.map((f) => f.name),
        ['Instance', 'Exit', 'Revision', 'Uptime', 'Reason'],
      );
      assert.is(field(e, 'Instance'), 'Alpha Station (alpha)');
      assert.is(field(e, 'Exit'), 'signal SIGKILL');
      assert.is(field(e, 'Revision'), 'r42');
      assert.is(field(e, 'Uptime'), '1 h 2 min');
      assert.is(field(e, 'Reason'), 'exited on its own');
      assert.is(hook?.messages[0]?.headers['content-type'], 'application/json');
    },
  );
});

test('routes :: embed: colour by kind, for alerts, updates, maintenance and a notice', async () => {
  await withRoutes(
    1,
    ([url]) => ({ ChatWebhook: url, Format: 'Embed', Routes: [] }),
    async ({ bus, hooks: [hook] }) => {
      const alert = (kind: 'hang' | 'crash-loop' | 'failing' | 'stopped', code: number | null) =>
        bus.emit('instance:alert', {
          key: 'beta',
          kind,
          message: `${kind} text`,
          exit: code === null ? null : { code, signal: null },
          at: T0,
        });
      alert('hang', null);
      alert('crash-loop', null);
      alert('failing', 3);
      alert('stopped', 0);
      bus.emit('instance:update', { key: 'beta', phase: 'done', revision: 'r43', durationMs: 1500, at: T0 });
      bus.emit('instance:update', { key: 'beta', phase: 'failed', error: 'CDN down', during: 'check', at: T0 });
      bus.emit('instance:update', { key: 'beta', phase: 'failed', error: 'hash mismatch', during: 'install', at: T0 });
      bus.emit('instance:maintenance-pending', {
        key: 'beta',
        kind: 'scheduled-restart',
        when: 'Empty',
        deadline: T0,
        at: T0,
      });
      bus.emit('instance:maintenance-pending', {
        key: 'beta',
        kind: 'hold',
        reason: 'event night',
        until: T0 + 7_200_000,
        at: T0,
      });
      const notice: Notice = { key: 'beta', kind: 'hold', message: 'custom', title: 'Custom', at: T0 };
      bus.emit('instance:notice', notice);
      // One webhook, one queue, in order: anything told in between would come before this last one.
      bus.emit('instance:notice', { ...notice, title: 'Last' });
      await waitFor('the last embed', () => hook?.messages.length === 10, 10_000);
      const embeds = (hook?.messages ?? []).map(embedOf);
      assert.is(embeds.pop()?.title.split(' · ')[0], 'Last');
      assert.equal(
        embeds.map((e) => [e.title.split(' · ')[0], e.color]),
        [
          ['Hung', KINDS.hang.colour],
          ['Restart loop', KINDS.loop.colour],
          ['Failing to start', KINDS.failing.colour],
          ['Stopped', KINDS.stopped.colour],
          ['Update installed', KINDS['update-installed'].colour],
          ['Update failed', KINDS['update-failed'].colour],
          ['Scheduled restart pending', KINDS['scheduled-restart'].colour],
          ['Hold', KINDS.hold.colour],
          ['Custom', KINDS.hold.colour],
        ],
        'a failed check (CDN down) is not told; nine, in order',
      );
      assert.equal(
        [KINDS.hang.colour, KINDS.loop.colour, KINDS['update-installed'].colour, KINDS.stopped.colour],
        [0xe74c3c, 0x992d22, 0x3498db, 0x95a5a6],
        'red, dark red, blue, grey',
      );
      const [, , failing, , installed, failed, pending, hold] = embeds;
      assert.is(field(failing as Embed, 'Exit'), 'exit code 3');
      assert.is(field(failing as Embed, 'Uptime'), undefined, 'no uptime for a server that never started');
      assert.is(field(installed as Embed, 'Revision'), 'r43');
      assert.is(field(failed as Embed, 'Reason'), 'hash mismatch');
      assert.match(pending?.description ?? '', /^Server `beta` will restart for its schedule as soon as no players/);
      assert.is(field(pending as Embed, 'When'), 'Empty');
      assert.is(field(hold as Embed, 'Reason'), 'event night');
      assert.match(field(hold as Embed, 'Until') ?? '', /^<t:\d+:f>/);
      assert.is(field(embeds[0] as Embed, 'Instance'), 'beta', 'no Name: the key alone');
    },
  );
});

test('routes :: two routes: each receives only its kinds and instances; ChatWebhook gets everything as text', async () => {
  await withRoutes(
    3,
    ([chat, ops, maint]) => ({
      ChatWebhook: chat,
      Format: 'Text',
      Routes: [
        { Webhook: ops as string, Events: ['crash', 'hang'], Instances: ['alpha'], Format: 'Embed' },
        { Webhook: maint as string, Events: ['update-installed', 'hold'] },
      ],
    }),
    async ({ bus, hooks: [chat, ops, maint] }) => {
      const crash = (key: string) =>
        bus.emit('instance:alert', { key, kind: 'crash', message: `Server \`${key}\` crashed`, at: T0 });
      crash('alpha');
      crash('beta');
      bus.emit('instance:update', { key: 'beta', phase: 'done', revision: '7', at: T0 });
      bus.emit('instance:maintenance-pending', { key: 'alpha', kind: 'hold', reason: 'tournament', at: T0 });
      bus.emit('instance:alert', { key: 'alpha', kind: 'stopped', level: 'info', message: 'stopped', at: T0 });
      // Last, a message each route takes: every route's queue is in order, so what it wrongly took comes before.
      bus.emit('instance:alert', { key: 'alpha', kind: 'hang', message: 'last', at: T0 });
      bus.emit('instance:maintenance-pending', { key: 'beta', kind: 'hold', reason: 'last', at: T0 });
      await waitFor('every delivery', () => chat?.messages.length === 7 && ops?.messages.length === 2, 10_000);
      await waitFor('the maintenance route', () => maint?.messages.length === 3, 10_000);
      assert.match(embedOf(ops?.messages.pop()).description, /last/);
      assert.match(maint?.messages.pop()?.content ?? '', /\(last\)/);
      chat?.messages.splice(5);
      assert.is(ops?.messages.length, 1, 'ops: only the crash of alpha');
      assert.is(embedOf(ops?.messages[0]).description, 'Server `alpha` crashed', 'in its own format (Embed)');
      assert.equal(
        maint?.messages.map((m) => m.content),
        ['Server `beta` was updated to revision 7.', maint?.messages[1]?.content],
        'maintenance: the update and the hold, as text',
      );
      assert.match(maint?.messages[1]?.content ?? '', /^Server `alpha` is on hold \(tournament\)/);
      assert.equal(
        chat?.messages.map((m) => (m.body as { content: string }).content.slice(0, 16)),
        ['Server `alpha` c', 'Server `beta` cr', 'Server `beta` wa', 'Server `alpha` i', 'stopped'],
      );
    },
  );
});

test('routes :: one webhook named by two matching routes gets the message once', async () => {
  await withRoutes(
    1,
    ([url]) => ({
      ChatWebhook: url,
      Format: 'Text',
      Routes: [{ Webhook: url as string, Events: ['crash'], Format: 'Embed' }],
    }),
    async ({ bus, hooks: [hook] }) => {
      bus.emit('instance:alert', { key: 'alpha', kind: 'crash', message: 'once', at: T0 });
      bus.emit('instance:alert', { key: 'alpha', kind: 'crash', message: 'then this', at: T0 });
      // A second copy of `once` would be sent before `then this` by whichever queue sent it.
      await waitFor('delivered', () => hook?.messages.some((m) => m.content === 'then this'), 10_000);
      assert.equal(
        hook?.messages.map((m) => m.content),
        ['once', 'then this'],
        'each once, in the first route’s format (ChatWebhook, Text)',
      );
    },
  );
});

test('routes :: a 429 on one webhook does not delay another; logs name the route, never the URL', async () => {
  const fast = await startWebhookReceiver();
  // The limited webhook answers its 429 only once the other has both messages: held up behind it, the other would
  // never get them.
  const slow = await gatedRecorder(
    () => fast.messages.length === 2,
    (i) => (i === 1 ? { status: 429, headers: { 'Retry-After': '1.5' } } : { status: 204 }),
  );
  const bus = createBus();
  const log = captureLog();
  const secret = 'api/webhooks/123/s3cr3t-t0ken';
  const notifier = createNotifier({
    routes: routesFrom({
      Format: 'Text',
      Routes: [
        { Webhook: `${slow.url}${secret}`, Events: ['crash'] },
        { Webhook: fast.url, Events: ['crash'] },
      ],
    }),
    bus,
    log,
    ...timing,
  });
  try {
    bus.emit('instance:alert', { key: 'alpha', kind: 'crash', message: 'first', at: T0 });
    bus.emit('instance:alert', { key: 'alpha', kind: 'crash', message: 'second', at: T0 });
    await waitFor('the other webhook got both', () => fast.messages.length === 2, 10_000);
    await waitFor('the limited one caught up', () => slow.requests.length === 3, 10_000);
    const retry = log.lines.find((l) => l.startsWith('debug chat webhook: retrying'));
    assert.match(retry ?? '', /"route":"Notification\.Routes\[0\]".*"delayMs":1500/, 'after its Retry-After');
    assert.equal(
      slow.requests.map((r) => (JSON.parse(r) as { content: string }).content),
      ['first', 'first', 'second'],
    );
    await slow.close();
    bus.emit('instance:alert', { key: 'alpha', kind: 'crash', message: 'unreachable', at: T0 });
    await waitFor('gave up', () => log.lines.some((l) => l.startsWith('warn chat webhook refused')), 5000);
    const said = log.lines.join('\n');
    assert.match(said, /"route":"Notification\.Routes\[0\]"/);
    assert.not.match(said, /s3cr3t/, 'the token is never logged');
  } finally {
    await notifier.stop();
    await slow.close();
    await fast.close();
  }
});

test.run();
