import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { validateInfo, validateStatus } from '../../src/kit/schemas.ts';
import { exitWithin, post, type RunningDemo, startDemo, udpPlayer } from '../_support/demo.ts';
import { waitFor } from '../_support/env.ts';

const SECRET = 'c2VjcmV0+/with=special';

interface Ctx {
  demo?: RunningDemo;
}
const api = suite<Ctx>('demo :: HTTP API over a real socket (token set)', {});

api.before(async (ctx) => {
  ctx.demo = await startDemo(
    [
      '--cvar',
      'game.hostname=[EN][18+] Test',
      '--cvar',
      'hub.tags=region:eu_w,rp:low',
      '--cvar',
      'demo.ignore_shutdown=true',
      '--cvar',
      'game.round_length=600',
    ],
    { env: { ROBUST_CVAR_watchdog__token: SECRET } },
  );
});
api.after(async (ctx) => {
  await ctx.demo?.kill();
});

api('api :: GET /status → 200 JSON with CORS that passes the schema', async ({ demo }) => {
  const res = await fetch(`${demo!.base}/status`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.is(res.headers.get('access-control-allow-origin'), '*');
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(validateStatus(body).problems, []);
  assert.is(body.name, '[EN][18+] Test');
  assert.is(body.players, 0);
  assert.is(body.soft_max_players, 32);
  assert.equal(body.tags, ['region:eu_w', 'rp:low']);
  assert.type(body.round_id, 'number');
});

api(
  'api :: GET /info → 200 JSON with CORS that passes the schema, both connect-address spellings',
  async ({ demo }) => {
    const res = await fetch(`${demo!.base}/info`);
    assert.is(res.status, 200);
    assert.is(res.headers.get('access-control-allow-origin'), '*');
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(validateInfo(body).problems, []);
    assert.ok('connect_address' in body && 'connect_addrees' in body);
    const auth = body.auth as { mode: string; public_key: string };
    assert.is(auth.mode, 'Required');
    assert.is(Buffer.from(auth.public_key, 'base64').length, 32, '32-byte public key');
  },
);

for (const path of ['/status', '/info']) {
  api(`api :: HEAD ${path} → 200, headers only`, async ({ demo }) => {
    const res = await fetch(`${demo!.base}${path}`, { method: 'HEAD' });
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.is(res.headers.get('access-control-allow-origin'), '*');
    assert.is(await res.text(), '');
  });
}

api('api :: unknown paths and wrong methods → 404 Not Found', async ({ demo }) => {
  for (const [method, path] of [
    ['GET', '/nope'],
    ['POST', '/status'],
    ['GET', '/shutdown'],
    ['POST', '/update/'],
  ] as const) {
    const res = await fetch(`${demo!.base}${path}`, { method });
    assert.is(res.status, 404, `${method} ${path}`);
    assert.is(await res.text(), 'Not Found');
  }
});

for (const route of ['/shutdown', '/update']) {
  api(`api :: POST ${route} without WatchdogToken → 400 Expected WatchdogToken header`, async ({ demo }) => {
    const r = await post(`${demo!.base}${route}`, {}, '{}');
    assert.equal(r, { status: 400, text: 'Expected WatchdogToken header' });
  });
  api(`api :: POST ${route} with a wrong token → 401 Unauthorized`, async ({ demo }) => {
    const r = await post(`${demo!.base}${route}`, { WatchdogToken: `${SECRET}x` }, '{}');
    assert.equal(r, { status: 401, text: 'Unauthorized' });
  });
  api(`api :: POST ${route} with malformed JSON → 400 BadRequest`, async ({ demo }) => {
    const r = await post(
      `${demo!.base}${route}`,
      { WatchdogToken: SECRET, 'Content-Type': 'application/json' },
      '{"Reason":',
    );
    assert.equal(r, { status: 400, text: 'BadRequest' });
  });
}

api('api :: POST /shutdown with a non-object body → 400', async ({ demo }) => {
  assert.is((await post(`${demo!.base}/shutdown`, { WatchdogToken: SECRET }, '"bye"')).status, 400);
  assert.is((await post(`${demo!.base}/shutdown`, { WatchdogToken: SECRET })).status, 400, 'no body');
});

api(
  'api :: POST /shutdown (text/plain body, as the watchdog sends it) → 200 Success; demo.ignore_shutdown keeps it running',
  async ({ demo }) => {
    const r = await post(
      `${demo!.base}/shutdown`,
      { WatchdogToken: SECRET, 'Content-Type': 'text/plain; charset=utf-8' },
      '{"Reason":"Watchdog shutting down."}',
    );
    assert.equal(r, { status: 200, text: 'Success' });
    await waitFor('the reason in the log', () => /Watchdog shutting down\., shutting down\.\.\./.test(demo!.output()));
    assert.match(demo!.output(), /ignoring the shutdown request/);
    assert.is((await fetch(`${demo!.base}/status`)).status, 200, 'still serving');
  },
);

api(
  'api :: POST /update with players on → 200 Success, announced to each joined player over UDP, still running; the last leave ends it with 0',
  async ({ demo }) => {
    const alice = await udpPlayer(demo!.port);
    const bob = await udpPlayer(demo!.port);
    const stranger = await udpPlayer(demo!.port);
    try {
      assert.is(await alice.send('join alice'), 'welcome alice');
      assert.is(await bob.send('join bob'), 'welcome bob');
      assert.is(await stranger.send('ping'), 'pong 2', 'pinging does not join');
      const { round_id: round } = (await (await fetch(`${demo!.base}/status`)).json()) as { round_id: number };
      const r = await post(
        `${demo!.base}/update`,
        { WatchdogToken: SECRET, 'Content-Type': 'application/json' },
        '{"Reason":"Maintenance","Message":"back soon"}',
      );
      assert.equal(r, { status: 200, text: 'Success' });
      const announcement = `announce the server restarts for an update at the end of round ${round}`;
      assert.is(await alice.receive(), announcement);
      assert.is(await bob.receive(), announcement);
      // The server sends in order, so an announcement to the stranger would already sit before this pong.
      assert.is(await stranger.send('ping'), 'pong 2');
      const unasked = await stranger.receive(100).catch((err: unknown) => err);
      assert.instance(unasked, Error, 'only joined players are told');
      await waitFor(
        'the announcement in the log',
        () =>
          /update received \(Maintenance\): back soon/.test(demo!.output()) &&
          /announcement: the server restarts/.test(demo!.output()),
      );
      assert.is(
        ((await (await fetch(`${demo!.base}/status`)).json()) as { players: number }).players,
        2,
        'still running with the players',
      );
      assert.is(await bob.send('leave'), 'bye');
      assert.is(demo!.exit(), undefined, 'one player is still on');
      assert.is(await alice.send('leave'), 'bye');
      const exit = await exitWithin(demo!);
      assert.equal(exit, { code: 0, signal: null });
      assert.match(demo!.output(), /the last player left; restarting for the update/);
      assert.not.ok(demo!.output().includes(SECRET), 'the token is never logged');
    } finally {
      await alice.close();
      await bob.close();
      await stranger.close();
    }
  },
);
api.run();

// ---
const off = suite<Ctx>('demo :: HTTP API without watchdog.token', {});
off.before(async (ctx) => {
  ctx.demo = await startDemo();
});
off.after(async (ctx) => {
  await ctx.demo?.kill();
});

for (const route of ['/shutdown', '/update']) {
  off(`api :: POST ${route} → 404 Not Found, and the server keeps running`, async ({ demo }) => {
    const r = await post(`${demo!.base}${route}`, { WatchdogToken: 'anything' }, '{}');
    assert.equal(r, { status: 404, text: 'Not Found' });
    assert.is((await fetch(`${demo!.base}/status`)).status, 200);
    assert.is(demo!.exit(), undefined);
  });
}
off.run();
