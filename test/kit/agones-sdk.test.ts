import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AgonesSdk, AgonesSdkError, agonesPortFrom } from '../../src/kit/agones/sdk.ts';
import type { GameServer } from '../../src/kit/agones/wire.ts';
import { type FakeAgonesSdk, startAgonesSdk } from '../_support/agones-sdk.ts';
import { sendEndless } from '../_support/endless.ts';
import { freePort, waitFor, within } from '../_support/env.ts';

/** Fast retries: the fake is on loopback, so nothing here waits longer than a few hundred ms. */
const FAST = { initialDelayMs: 20, maxDelayMs: 100, maxElapsedMs: 2_000, timeoutMs: 1_000 };

const client = suite<{ sdk: FakeAgonesSdk }>('agones sdk :: calls', { sdk: undefined as unknown as FakeAgonesSdk });
client.before.each(async (ctx) => {
  ctx.sdk = await startAgonesSdk();
});
client.after.each(async (ctx) => {
  await ctx.sdk.close();
});

client(
  'agones-sdk :: lifecycle calls send {} and move the GameServer; getGameServer reads it',
  async ({ sdk: fake }) => {
    const sdk = new AgonesSdk({ port: fake.port, retry: FAST });
    assert.is(sdk.baseUrl, `http://127.0.0.1:${fake.port}`);
    await sdk.health();
    await sdk.ready();
    assert.is((await sdk.getGameServer()).status?.state, 'Ready');
    await sdk.allocate();
    assert.is(fake.gameServer().status.state, 'Allocated');
    await sdk.reserve(5);
    assert.is(fake.gameServer().status.state, 'Reserved');
    await sdk.shutdown();
    assert.is((await sdk.getGameServer()).status?.state, 'Shutdown');
    for (const path of ['/health', '/ready', '/allocate', '/shutdown']) {
      assert.equal(fake.callsTo('POST', path)[0]?.body, {}, path);
    }
    assert.equal(fake.callsTo('POST', '/reserve')[0]?.body, { seconds: '5' }, 'int64 as a JSON string');
    assert.match(String(await sdk.reserve(0.5).catch((e: unknown) => e)), /seconds must be a whole number/);
    assert.ok(fake.calls.every((c) => c.status === 200));
  },
);

client('agones-sdk :: labels and annotations land with the agones.dev/sdk- prefix', async ({ sdk: fake }) => {
  const sdk = new AgonesSdk({ env: fake.env, retry: FAST });
  await sdk.setLabel('players', '3');
  await sdk.setAnnotation('map', 'dust');
  const gs = await sdk.getGameServer();
  assert.is(gs.object_meta?.labels?.['agones.dev/sdk-players'], '3');
  assert.is(gs.object_meta?.annotations?.['agones.dev/sdk-map'], 'dust');
  assert.equal(fake.callsTo('PUT', '/metadata/label')[0]?.body, { key: 'players', value: '3' });
});

client('agones-sdk :: counters: int64 values travel as strings and come back as numbers', async ({ sdk: fake }) => {
  const sdk = new AgonesSdk({ port: fake.port, retry: FAST });
  assert.equal(await sdk.getCounter('players'), { name: 'players', count: 0, capacity: 100 });
  assert.equal(await sdk.setCounter('players', 7), { name: 'players', count: 7, capacity: 100 });
  assert.equal(await sdk.updateCounter('players', { countDiff: -2n }), { name: 'players', count: 5, capacity: 100 });
  const patches = fake.callsTo('PATCH', '/v1beta1/counters/players').map((c) => c.body);
  assert.equal(patches, [{ count: '7' }, { countDiff: '-2' }]);
  const over = await sdk.setCounter('players', 101).catch((e: unknown) => e);
  assert.instance(over, AgonesSdkError);
  assert.is((over as AgonesSdkError).status, 400, 'out of range is an answer, not retried');
  assert.match(
    (over as Error).message,
    /PATCH \/v1beta1\/counters\/players: the Agones SDK server answered 400 \(count 101/,
  );
  const half = await sdk.setCounter('players', 1.5).catch((e: unknown) => e);
  assert.match(String(half), /count must be a whole number/);
});

client('agones-sdk :: an error answer is final: 404 is thrown at once, with the call and status', async () => {
  const fake = await startAgonesSdk({ counters: false });
  try {
    const sdk = new AgonesSdk({ port: fake.port, retry: FAST });
    const err = await sdk.getCounter('players').catch((e: unknown) => e);
    assert.instance(err, AgonesSdkError);
    assert.is((err as AgonesSdkError).status, 404);
    assert.is((err as AgonesSdkError).call, 'GET /v1beta1/counters/players');
    assert.is(fake.callsTo('GET', '/v1beta1/counters/players').length, 1, 'not retried');
  } finally {
    await fake.close();
  }
});

client(
  'agones-sdk :: watchGameServer: the current GameServer first, then every change; ends with its signal',
  async ({ sdk: fake }) => {
    const sdk = new AgonesSdk({ port: fake.port, retry: FAST });
    const seen: GameServer[] = [];
    const stop = new AbortController();
    const watching = sdk.watchGameServer((gs) => seen.push(gs), stop.signal);
    await waitFor('the first GameServer', () => seen.length >= 1, 10_000);
    assert.is(seen[0]?.status?.state, 'Scheduled');
    fake.setState('Shutdown');
    await waitFor('the change', () => seen.at(-1)?.status?.state === 'Shutdown', 10_000);
    stop.abort();
    await watching;
  },
);
client.run();

// ---
const late = suite('agones sdk :: an SDK server that is late or absent');

late('agones-sdk :: calls wait for an SDK server that starts late', async () => {
  const fake = await startAgonesSdk({ delayMs: 400 });
  try {
    const sdk = new AgonesSdk({ port: fake.port, retry: FAST });
    const seen: string[] = [];
    const stop = new AbortController();
    let up = false;
    void fake.listening.then(() => (up = true));
    const watching = sdk.watchGameServer((gs) => seen.push(gs.status?.state ?? ''), stop.signal);
    assert.not.ok(up, 'nothing listens yet when the call is made');
    await sdk.ready();
    assert.ok(up, 'it waited for the SDK server');
    assert.is(fake.callsTo('POST', '/ready').length, 1);
    await waitFor('the watch to connect once the server is up', () => seen.includes('Ready'), 10_000);
    stop.abort();
    await watching;
  } finally {
    await fake.close();
  }
});

late('agones-sdk :: the watch opens again when the SDK server goes away and comes back', async () => {
  const first = await startAgonesSdk();
  const port = first.port;
  const sdk = new AgonesSdk({ port, retry: FAST });
  const seen: string[] = [];
  const errors: Error[] = [];
  const stop = new AbortController();
  const watching = sdk.watchGameServer((gs) => seen.push(gs.status?.state ?? ''), stop.signal, {
    onError: (e) => errors.push(e),
  });
  let second: FakeAgonesSdk | undefined;
  try {
    await waitFor('the first stream', () => seen.length === 1, 10_000);
    await first.close();
    second = await startAgonesSdk({ port });
    second.setState('Allocated');
    await waitFor('the reopened stream', () => seen.includes('Allocated'), 10_000);
    assert.ok(errors.length >= 1, 'the break was reported');
    assert.is(second.callsTo('GET', '/watch/gameserver').length, 1);
  } finally {
    stop.abort();
    await watching;
    await first.close();
    await second?.close();
  }
});

late('agones-sdk :: no SDK server: gives up within maxElapsedMs with an error saying where it looked', async () => {
  const port = await freePort();
  const sdk = new AgonesSdk({ port, retry: { ...FAST, maxElapsedMs: 300 } });
  // Without maxElapsedMs it would retry for ever: the far deadline only catches that.
  const err = await within(
    10_000,
    'ready() with no SDK server',
    sdk.ready().catch((e: unknown) => e),
  );
  assert.instance(err, AgonesSdkError);
  assert.is((err as AgonesSdkError).status, null);
  assert.match(
    (err as Error).message,
    new RegExp(`POST /ready: no answer from the Agones SDK server at http://127.0.0.1:${port}`),
  );
  assert.match((err as Error).message, /AGONES_SDK_HTTP_PORT/);
});

late('agones-sdk :: a cancel ends the waiting at once', async () => {
  const sdk = new AgonesSdk({ port: await freePort(), retry: { ...FAST, maxElapsedMs: Number.POSITIVE_INFINITY } });
  const stop = new AbortController();
  setTimeout(() => stop.abort(new Error('cancelled by the test')), 150);
  // Nothing else ends this wait (no maxElapsedMs, no SDK server): it rejects with the cancel's reason, or hangs
  // until the far deadline.
  const err = await within(
    10_000,
    'ready() after the cancel',
    sdk.ready({ signal: stop.signal }).catch((e: unknown) => e),
  );
  assert.instance(err, Error);
  assert.match((err as Error).message, /cancelled by the test/);
});

late('agones-sdk :: AGONES_SDK_HTTP_PORT picks the port; junk is ignored', () => {
  assert.is(agonesPortFrom({ AGONES_SDK_HTTP_PORT: '9400' }), 9400);
  assert.is(agonesPortFrom({ AGONES_SDK_HTTP_PORT: 'x' }), undefined);
  assert.is(agonesPortFrom({}), undefined);
  assert.is(new AgonesSdk({ env: {} }).baseUrl, 'http://127.0.0.1:9358');
});
late.run();

// ---
const strict = suite('agones sdk :: the fake is strict');

strict(
  'agones-sdk :: unknown path 404, wrong method 405 with Allow, bad bodies 400, numbers for int64 400',
  async () => {
    const fake = await startAgonesSdk();
    try {
      const send = async (method: string, path: string, body?: string) =>
        (await fetch(fake.url + path, { method, body, headers: { 'content-type': 'application/json' } })).status;
      assert.is(await send('POST', '/readyy', '{}'), 404);
      assert.is(await send('GET', '/ready'), 405);
      assert.is((await fetch(`${fake.url}/ready`)).headers.get('allow'), 'POST');
      assert.is(await send('POST', '/watch/gameserver', '{}'), 405);
      assert.is(await send('POST', '/health'), 400, 'an empty body, as the real gateway refuses for /health');
      assert.is(await send('POST', '/ready', '[]'), 400);
      assert.is(await send('POST', '/ready', 'ready'), 400);
      assert.is(await send('POST', '/reserve', '{"seconds":5}'), 400);
      assert.is(await send('PATCH', '/v1beta1/counters/players', '{"count":3}'), 400);
      assert.is(await send('PATCH', '/v1beta1/counters/players', '{"count":"3"}'), 200);
      assert.is(fake.calls.length, 10, 'every request recorded');
      assert.ok(fake.calls.every((c) => typeof c.at === 'number' && c.at > 0));
      assert.is(fake.gameServer().status.state, 'Scheduled', 'refused calls changed nothing');
    } finally {
      await fake.close();
    }
  },
);
strict.run();

const endless = suite('agones sdk :: an SDK server whose answer has no end');

endless(
  'agones-sdk :: a call reads at most its cap and is not asked again; a watch line without end is cut',
  async () => {
    const sent: number[] = [];
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      // The watch stream: JSON that never reaches its newline. A call: a body without end.
      const head = Buffer.from(req.url === '/watch/gameserver' ? '{"result": {"status": "' : '{"object_meta": "');
      void sendEndless(res, head, 'application/json').then((n) => sent.push(n));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const sdk = new AgonesSdk({ port, retry: FAST });
      const err = await sdk.getGameServer().then(
        () => null,
        (e: unknown) => e,
      );
      assert.instance(err, AgonesSdkError);
      assert.match(
        (err as Error).message,
        /^GET \/gameserver: the answer to GET \/gameserver from .* passed 256 kB, the most/,
      );
      assert.equal(requests, ['GET /gameserver'], 'an answer past its cap is final: not asked again');

      const errors: Error[] = [];
      const stop = new AbortController();
      const watching = sdk.watchGameServer(() => {}, stop.signal, { onError: (e) => errors.push(e), retry: FAST });
      await waitFor('the watch to give up on the line', () => errors[0], 10_000);
      stop.abort();
      await watching;
      assert.match(errors[0]?.message ?? '', /a line of GET \/watch\/gameserver passed 256 kB/);
      await waitFor('both answers to be hung up on', () => (sent.length >= 2 ? true : undefined), 10_000);
      for (const n of sent) assert.ok(n < 64_000_000, `cut off after ${n} bytes, not read on`);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  },
);

endless.run();
