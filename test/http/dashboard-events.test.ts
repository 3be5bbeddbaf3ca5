/** `GET /events` (src/http/dashboard/events.ts): the dashboard's Server-Sent Events stream, read through app.request(). */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Bus, type BusEvents, createBus } from '../../src/bus.ts';
import { createApp } from '../../src/http/app.ts';
import { eventRoutes } from '../../src/http/dashboard/events.ts';
import { STREAMED } from '../../src/http/dashboard/recent-events.ts';
import type { HttpDeps } from '../../src/http/deps.ts';
import { startHttpServer } from '../../src/http/server.ts';
import { waitFor, within } from '../_support/env.ts';
import { fromLoopback, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';

interface SseMessage {
  event: string;
  data: unknown;
}

/** Reads SSE messages off a response body; `next()` waits (bounded) for the next one matching `want`. */
function sseReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queue: SseMessage[] = [];
  const comments: string[] = [];
  const pull = async (timeoutMs: number) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Error(`no SSE data within ${timeoutMs} ms`)), timeoutMs)),
    );
    try {
      const { value, done } = await Promise.race([reader.read(), timeout]);
      if (done) throw new Error('the event stream ended');
      buffer += decoder.decode(value, { stream: true });
    } finally {
      clearTimeout(timer);
    }
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const lines = block.split('\n');
      for (const l of lines) if (l.startsWith(':')) comments.push(l.slice(1).trim());
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      if (event) queue.push({ event, data: JSON.parse(data) });
    }
  };
  return {
    comments,
    async next(want: (m: SseMessage) => boolean = () => true, timeoutMs = 5000): Promise<SseMessage> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const i = queue.findIndex(want);
        if (i >= 0) return queue.splice(i, 1)[0]!;
        await pull(Math.max(1, deadline - Date.now()));
      }
    },
    /** Resolves when `check()` holds after reading, e.g. a keep-alive comment arrived. */
    async until(check: () => boolean, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!check()) await pull(Math.max(1, deadline - Date.now()));
    },
    cancel: () => reader.cancel(),
  };
}

const listeners = (bus: Bus, type: keyof BusEvents) => bus.all.get(type)?.length ?? 0;

/**
 * Runs `fn` (synchronous) with `performance.now()` reading `ms`: the log limiter counts per second of the monotonic
 * clock, and this puts a batch of lines into one chosen second instead of waiting for the clock to reach a fresh one.
 */
function atMonotonic(ms: number, fn: () => void): void {
  const real = performance.now;
  performance.now = () => ms;
  try {
    fn();
  } finally {
    performance.now = real;
  }
}

function setup(opts: Parameters<typeof eventRoutes>[1] = {}) {
  const bus = createBus();
  const alpha = memoryInstance('alpha', { apiToken: 't' });
  const deps: HttpDeps = {
    registry: memoryRegistry(alpha),
    bus,
    log: recordingLogger(),
    version: '1.2.3',
  };
  // The stream's own options are set through eventRoutes; createApp mounts it with the defaults.
  const app = fromLoopback(Object.keys(opts).length ? eventRoutes(deps, opts) : createApp(deps));
  return { bus, alpha, app };
}

const events = suite('dashboard :: /events');

events(
  'events :: hello first (statuses, chart states, version), then a bus fact as its own event with the status after it',
  async () => {
    const { bus, alpha, app } = setup();
    const res = await app.request('/events');
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', 'text/event-stream');
    const sse = sseReader(res);
    try {
      const hello = await sse.next();
      assert.is(hello.event, 'hello');
      const h = hello.data as { version: string; now: number; states: string[]; instances: { key: string }[] };
      assert.is(h.version, '1.2.3');
      assert.ok(h.states.includes('stopped.idle') && h.states.includes('server.running'));
      assert.equal(
        h.instances.map((i) => i.key),
        ['alpha'],
      );
      assert.ok(Math.abs(h.now - Date.now()) < 5000);

      alpha.state = 'stopped.idle';
      bus.emit('instance:state', { key: 'alpha', state: 'stopped.idle', previous: 'server.running', at: 1 });
      const m = await sse.next();
      assert.is(m.event, 'instance:state');
      const d = m.data as BusEvents['instance:state'] & { instance: { state: string } };
      assert.is(d.state, 'stopped.idle');
      assert.is(d.previous, 'server.running');
      assert.is(d.instance.state, 'stopped.idle', 'the status after the fact rides along');
    } finally {
      await sse.cancel();
    }
  },
);

events('events :: every streamed fact type arrives under its own event name', async () => {
  const { bus, app } = setup();
  const sse = sseReader(await app.request('/events'));
  try {
    await sse.next((m) => m.event === 'hello');
    const at = Date.now();
    bus.emit('instance:alert', { key: 'alpha', kind: 'crash', message: 'Server `alpha` crashed', at });
    bus.emit('instance:update', { key: 'alpha', phase: 'download', bytes: 10, total: 100, at });
    bus.emit('instance:restart', { key: 'alpha', reason: 'request', at });
    bus.emit('instance:launch', { key: 'alpha', pid: 7, launchId: 2, revision: null, at });
    bus.emit('instance:checkin', { key: 'alpha', launchId: 2, at });
    bus.emit('instance:maintenance-pending', { key: 'alpha', kind: 'hold', reason: 'event', until: at + 60_000, at });
    bus.emit('instance:maintenance-done', { key: 'alpha', kind: 'hold', how: 'released', at });
    bus.emit('instance:control', {
      key: 'alpha',
      action: 'restart',
      user: 'alpha',
      remote: '127.0.0.1',
      status: 200,
      result: 'accepted',
      at,
    });
    bus.emit('instance:launch-blocked', {
      key: 'alpha',
      kind: 'resources',
      message: 'the watchdog is out of file descriptors (EMFILE)',
      attempts: 1,
      retryMs: 1000,
      at,
    });
    bus.emit('instance:launch-unblocked', { key: 'alpha', kind: 'resources', attempts: 1, at });
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) seen.push((await sse.next()).event);
    assert.equal(seen, [
      'instance:alert',
      'instance:update',
      'instance:restart',
      'instance:launch',
      'instance:checkin',
      'instance:maintenance-pending',
      'instance:maintenance-done',
      'instance:control',
      'instance:launch-blocked',
      'instance:launch-unblocked',
    ]);
    assert.equal([...STREAMED].sort(), [...seen, 'instance:state'].sort(), 'the test covers every streamed type');
  } finally {
    await sse.cancel();
  }
});

events('events :: check-ins are throttled per instance; other facts are not', async () => {
  const { bus, app } = setup({ checkinEveryMs: 60_000 });
  const sse = sseReader(await app.request('/events'));
  try {
    await sse.next((m) => m.event === 'hello');
    for (let i = 0; i < 5; i++) bus.emit('instance:checkin', { key: 'alpha', launchId: 1, at: Date.now() + i });
    bus.emit('instance:checkin', { key: 'beta', launchId: 1, at: Date.now() });
    bus.emit('instance:restart', { key: 'alpha', reason: 'crash', at: Date.now() });
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const m = await sse.next();
      got.push(`${m.event}:${(m.data as { key: string }).key}`);
    }
    assert.equal(got, ['instance:checkin:alpha', 'instance:checkin:beta', 'instance:restart:alpha']);
  } finally {
    await sse.cancel();
  }
});

events('events :: cancelling the stream unsubscribes from the bus', async () => {
  const { bus, app } = setup();
  const before = listeners(bus, 'instance:state');
  const sse = sseReader(await app.request('/events'));
  await sse.next((m) => m.event === 'hello');
  assert.is(listeners(bus, 'instance:state'), before + 1);
  await sse.cancel();
  await waitFor('the stream to let go of the bus', () => listeners(bus, 'instance:state') === before, 5000);
  assert.is(listeners(bus, 'instance:control'), before, 'every type is let go');
  bus.emit('instance:state', { key: 'alpha', state: 'server.running', previous: null, at: 1 }); // nothing may throw
});

events('events :: log lines only with ?logs=1, rate-limited with a skipped count', async () => {
  const { bus, app } = setup({ logLinesPerSecond: 3 });
  const plain = sseReader(await app.request('/events'));
  const logs = sseReader(await app.request('/events?logs=1'));
  try {
    const events = async (r: typeof plain) =>
      ((await r.next((m) => m.event === 'hello')).data as { events: string[] }).events;
    assert.equal(await events(plain), [...STREAMED], 'hello names the events the page listens for');
    assert.equal(await events(logs), [...STREAMED, 'instance:log']);
    // All ten lines in one rate window (a second no line has used yet), then one in the next window.
    const second = (Math.floor(performance.now() / 1000) + 1) * 1000;
    atMonotonic(second, () => {
      for (let i = 0; i < 10; i++)
        bus.emit('instance:log', { key: 'alpha', stream: 'stdout', line: `line ${i}`, at: second });
      bus.emit('instance:restart', { key: 'alpha', reason: 'crash', at: second });
    });
    const lines: string[] = [];
    for (;;) {
      const m = await logs.next();
      if (m.event === 'instance:restart') break;
      lines.push((m.data as { line: string }).line);
    }
    assert.equal(lines, ['line 0', 'line 1', 'line 2']);
    const first = await plain.next();
    assert.is(first.event, 'instance:restart', 'no log lines without ?logs=1');
    atMonotonic(second + 1000, () =>
      bus.emit('instance:log', { key: 'alpha', stream: 'stdout', line: 'after', at: second + 1000 }),
    );
    const after = (await logs.next()).data as { line: string; skipped: number };
    assert.is(after.line, 'after');
    assert.is(after.skipped, 7);
  } finally {
    await plain.cancel();
    await logs.cancel();
  }
});

events('events :: hello carries the recent listed events, oldest first, without progress or check-ins', async () => {
  const { bus, app } = setup({ recentEvents: 2 });
  const at = Date.now();
  bus.emit('instance:restart', { key: 'alpha', reason: 'crash', at });
  bus.emit('instance:checkin', { key: 'alpha', launchId: 1, at });
  bus.emit('instance:update', { key: 'alpha', phase: 'download', bytes: 1, total: 2, at });
  bus.emit('instance:update', { key: 'alpha', phase: 'done', revision: 'r2', durationMs: 5, at });
  bus.emit('instance:state', { key: 'alpha', state: 'server.running', previous: 'server.starting', at });
  const sse = sseReader(await app.request('/events'));
  try {
    const hello = (await sse.next()).data as { recent: { type: string; event: { key: string } }[] };
    assert.equal(
      hello.recent.map((r) => r.type),
      ['instance:update', 'instance:state'],
    );
  } finally {
    await sse.cancel();
  }
});

events('events :: an idle stream gets keep-alive comments', async () => {
  const { app } = setup({ keepaliveMs: 50 });
  const sse = sseReader(await app.request('/events'));
  try {
    await sse.until(() => sse.comments.includes('keepalive'), 5000);
  } finally {
    await sse.cancel();
  }
});

events('events :: closing the server ends a connected stream and lets go of the bus (graceful shutdown)', async () => {
  const { bus, app } = setup({ keepaliveMs: 60_000 });
  const before = listeners(bus, 'instance:state');
  const server = await startHttpServer(app, { port: 0 });
  const res = await fetch(`${server.url}/events`);
  const sse = sseReader(res);
  await sse.next((m) => m.event === 'hello');
  assert.is(listeners(bus, 'instance:state'), before + 1);
  // Left open, the stream (a keep-alive a minute) would hold close() for ever; 10 s only catches that hang.
  await within(10_000, 'server.close() with a stream open', server.close());
  const ended = await sse
    .next(() => true, 5000)
    .then(
      (m) => `still open (${m.event})`,
      (err: Error) => err.message,
    );
  // Cut after the grace: the client reads the end of the stream, or fetch's `terminated`.
  assert.ok(['the event stream ended', 'terminated'].includes(ended), `the client saw its stream end: ${ended}`);
  await waitFor('the stream to let go of the bus', () => listeners(bus, 'instance:state') === before, 5000);
  await sse.cancel().catch(() => undefined);
});

events('events :: HEAD answers without opening a stream (nothing stays subscribed)', async () => {
  const { bus, app } = setup();
  const before = listeners(bus, 'instance:state');
  const res = await app.request('/events', { method: 'HEAD' });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', 'text/event-stream');
  assert.is(await res.text(), '', 'no body: no stream');
  // A later stream subscribes at once: had HEAD opened one, it would be counted too.
  const sse = sseReader(await app.request('/events'));
  await sse.next((m) => m.event === 'hello');
  assert.is(listeners(bus, 'instance:state'), before + 1);
  await sse.cancel();
});

events('events :: other methods → 405', async () => {
  const { app } = setup();
  const res = await app.request('/events', { method: 'POST' });
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'GET, HEAD');
});

events.run();
