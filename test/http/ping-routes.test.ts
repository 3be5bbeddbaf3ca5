import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { authCases, basic, harness, memoryInstance, memoryRegistry, send } from './_support/app.ts';

const SECRET = 'launch-secret-1';

function setup() {
  const alpha = memoryInstance('alpha', { apiToken: 'api-token', secret: SECRET });
  const colon = memoryInstance('colon', { secret: 'x:y:z' });
  const idle = memoryInstance('idle', { apiToken: 'api-token' }); // no server running: no secret
  return { ...harness(memoryRegistry(alpha, colon, idle)), alpha, colon, idle };
}

// ---

const auth = suite('ping routes :: auth order');

for (const tc of authCases('alpha', SECRET)) {
  auth(`ping routes :: ${tc.name}`, async () => {
    const t = setup();
    const res = await send(t.app, 'POST', `/server_api/${tc.key}/ping`, tc.header);
    assert.is(res.status, tc.status);
    assert.is(res.headers.get('www-authenticate'), tc.status === 401 ? 'Basic realm="watchdog"' : null);
    if (tc.status === 200) {
      assert.is(await res.text(), '');
      assert.equal(t.alpha.calls, ['checkin']);
      assert.equal(t.rejections, []);
    } else {
      assert.equal(t.alpha.calls, []);
      assert.is(t.rejections.length, 1, 'a refused check-in is emitted once');
      assert.is(t.rejections[0]?.key, tc.key);
    }
  });
}

auth('ping routes :: a secret containing ":" works (password = everything after the first colon)', async () => {
  const t = setup();
  assert.is((await send(t.app, 'POST', '/server_api/colon/ping', basic('colon', 'x:y:z'))).status, 200);
  assert.is((await send(t.app, 'POST', '/server_api/colon/ping', basic('colon', 'x'))).status, 401);
  assert.equal(t.colon.calls, ['checkin']);
});

auth('ping routes :: no server running → 401, reason "no server running"', async () => {
  const t = setup();
  const res = await send(t.app, 'POST', '/server_api/idle/ping', basic('idle', ''));
  assert.is(res.status, 401);
  assert.is(res.headers.get('www-authenticate'), 'Basic realm="watchdog"');
  assert.equal(t.idle.calls, []);
  assert.is(t.rejections[0]?.reason, 'no server running');
});

auth('ping routes :: the secret of an earlier launch is refused as stale', async () => {
  const t = setup();
  assert.is((await send(t.app, 'POST', '/server_api/alpha/ping', basic('alpha', SECRET))).status, 200);
  t.alpha.secret = 'launch-secret-2'; // the server was relaunched
  assert.is((await send(t.app, 'POST', '/server_api/alpha/ping', basic('alpha', SECRET))).status, 401);
  assert.is((await send(t.app, 'POST', '/server_api/alpha/ping', basic('alpha', 'launch-secret-2'))).status, 200);
  assert.equal(t.alpha.calls, ['checkin', 'checkin']);
  assert.equal(
    t.rejections.map((r) => r.reason),
    ['stale or wrong token'],
  );
});

auth('ping routes :: the ApiToken is not a check-in secret', async () => {
  const t = setup();
  assert.is((await send(t.app, 'POST', '/server_api/alpha/ping', basic('alpha', 'api-token'))).status, 401);
  assert.equal(t.alpha.calls, []);
});

auth.run();

// ---

const reasons = suite('ping routes :: rejection reasons');

reasons('ping routes :: each refusal names its reason and never the secret', async () => {
  const t = setup();
  const attempts: [string, string | undefined][] = [
    ['/server_api/alpha/ping', undefined],
    ['/server_api/alpha/ping', 'Basic %%%'],
    ['/server_api/ghost/ping', basic('ghost', SECRET)],
    ['/server_api/alpha/ping', basic('alpha', 'not-the-secret')],
    ['/server_api/idle/ping', basic('idle', SECRET)],
    ['/server_api/alpha/ping', basic('beta', SECRET)],
  ];
  for (const [path, header] of attempts) await send(t.app, 'POST', path, header);
  assert.equal(
    t.rejections.map((r) => [r.key, r.reason]),
    [
      ['alpha', 'malformed header: missing or not Basic'],
      ['alpha', 'malformed header: not base64 of user:password'],
      ['ghost', 'unknown instance'],
      ['alpha', 'stale or wrong token'],
      ['idle', 'no server running'],
      ['alpha', 'user does not match the instance key'],
    ],
  );
  for (const r of t.rejections) {
    assert.is(r.remote, undefined, 'no socket under app.request()');
    assert.not.match(r.reason, SECRET);
  }
  assert.not.match(t.log.lines.join('\n'), SECRET);
});

reasons('ping routes :: a hostile key is cleaned and capped in the rejection event', async () => {
  const t = setup();
  await send(t.app, 'POST', `/server_api/${encodeURIComponent('\u0007' + 'x'.repeat(9000))}/ping`);
  assert.is(t.rejections.length, 1);
  assert.ok(t.rejections[0]?.key.startsWith('?xxx'));
  assert.ok((t.rejections[0]?.key.length ?? 0) <= 201);
});

reasons('ping routes :: GET /server_api/x/ping → 405 with Allow: POST, no check-in, no rejection event', async () => {
  const t = setup();
  const res = await send(t.app, 'GET', '/server_api/alpha/ping', basic('alpha', SECRET));
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'POST');
  assert.equal(t.alpha.calls, []);
  assert.equal(t.rejections, []);
  assert.is((await send(t.app, 'POST', '/server_api/alpha/pong', basic('alpha', SECRET))).status, 404);
});

reasons.run();

// ---

const starting = suite('ping and control routes :: an instance still being started');

starting(
  'ping-routes :: a configured instance not ready yet answers 503 with Retry-After, a check-in is not a rejection, an unknown key stays 404',
  async () => {
    const alpha = memoryInstance('alpha', { apiToken: 'api-token', secret: SECRET });
    const registry = { ...memoryRegistry(alpha), starting: (key: string) => key === 'late' };
    const t = harness(registry);
    const ping = await send(t.app, 'POST', '/server_api/late/ping', basic('late', 'whatever'));
    assert.is(ping.status, 503);
    assert.is(ping.headers.get('retry-after'), '1');
    assert.match(await ping.text(), /still starting/);
    assert.equal(t.rejections, [], 'not logged as a rejected check-in');
    const control = await send(t.app, 'POST', '/instances/late/update', basic('late', 'api-token'));
    assert.is(control.status, 503);
    assert.is(control.headers.get('retry-after'), '1');
    const file = await send(t.app, 'GET', '/instances/late/binaries/SS14.Client.zip');
    assert.is(file.status, 503, 'a client download waits for the instance too');
    assert.is(file.headers.get('retry-after'), '1');
    assert.is((await send(t.app, 'POST', '/server_api/nobody/ping', basic('nobody', 'x'))).status, 404);
    assert.is((await send(t.app, 'POST', '/server_api/alpha/ping', basic('alpha', SECRET))).status, 200);
  },
);

starting.run();
