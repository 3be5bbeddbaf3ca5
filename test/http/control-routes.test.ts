import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { authCases, basic, harness, memoryInstance, memoryRegistry, send } from './_support/app.ts';

const TOKEN = 'tok-alpha-0123456789';

function setup() {
  const alpha = memoryInstance('alpha', { apiToken: TOKEN, secret: 'launch-secret' });
  const colon = memoryInstance('colon', { apiToken: 'a:b::c:' });
  const untokened = memoryInstance('untokened');
  const h = harness(memoryRegistry(alpha, colon, untokened));
  return { ...h, alpha, colon, untokened };
}

// ---

const control = suite('control routes :: auth order');

for (const action of ['restart', 'update', 'stop', 'rollback'] as const) {
  for (const tc of authCases('alpha', TOKEN)) {
    control(`control routes :: POST ${action}: ${tc.name}`, async () => {
      const t = setup();
      const res = await send(t.app, 'POST', `/instances/${tc.key}/${action}`, tc.header);
      assert.is(res.status, tc.status);
      assert.is(res.headers.get('www-authenticate'), tc.status === 401 ? 'Basic realm="watchdog"' : null);
      if (tc.status === 200) {
        assert.is(await res.text(), '');
        assert.equal(t.alpha.calls, [`control:${action}`]);
      } else {
        assert.equal(t.alpha.calls, []);
        assert.type(((await res.json()) as { error: unknown }).error, 'string');
      }
    });
  }
}

control('control routes :: the password is everything after the first colon (a token containing ":")', async () => {
  const t = setup();
  assert.is((await send(t.app, 'POST', '/instances/colon/restart', basic('colon', 'a:b::c:'))).status, 200);
  assert.equal(t.colon.calls, ['control:restart']);
  assert.match(t.colon.requesters[0] ?? '', /^with its API token/, 'the instance token asked');
  assert.is((await send(t.app, 'POST', '/instances/colon/restart', basic('colon', 'a'))).status, 401);
  assert.is((await send(t.app, 'POST', '/instances/colon/restart', basic('colon', 'a:b::c'))).status, 401);
  assert.equal(t.colon.calls, ['control:restart']);
});

control('control routes :: an instance without ApiToken refuses control with 401, whatever the password', async () => {
  const t = setup();
  for (const password of ['', 'undefined', 'null', TOKEN]) {
    const res = await send(t.app, 'POST', '/instances/untokened/stop', basic('untokened', password));
    assert.is(res.status, 401);
    assert.is(res.headers.get('www-authenticate'), 'Basic realm="watchdog"');
  }
  assert.equal(t.untokened.calls, []);
});

control('control routes :: the check-in secret is not an ApiToken', async () => {
  const t = setup();
  assert.is((await send(t.app, 'POST', '/instances/alpha/restart', basic('alpha', 'launch-secret'))).status, 401);
  assert.equal(t.alpha.calls, []);
});

control('control routes :: request bodies are ignored', async () => {
  const t = setup();
  const res = await send(t.app, 'POST', '/instances/alpha/update', basic('alpha', TOKEN), {
    body: JSON.stringify({ action: 'stop', token: 'x' }),
    headers: { 'content-type': 'application/json' },
  });
  assert.is(res.status, 200);
  assert.equal(t.alpha.calls, ['control:update']);
});

control.run();

// ---

const methods = suite('control routes :: methods and paths');

methods('control routes :: GET /instances/x/restart → 405 with Allow: POST', async () => {
  const t = setup();
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    const res = await send(t.app, method, '/instances/alpha/restart', basic('alpha', TOKEN));
    assert.is(res.status, 405, method);
    assert.is(res.headers.get('allow'), 'POST');
  }
  const head = await send(t.app, 'HEAD', '/instances/alpha/restart');
  assert.is(head.status, 405);
  assert.equal(t.alpha.calls, []);
});

methods('control routes :: unknown actions and paths → 404', async () => {
  const t = setup();
  for (const path of [
    '/instances/alpha/explode',
    '/instances/alpha',
    '/instances',
    '/instances/alpha/restart/now',
    '/instances//restart',
  ]) {
    const res = await send(t.app, 'POST', path, basic('alpha', TOKEN));
    assert.is(res.status, 404, path);
  }
  assert.equal(t.alpha.calls, []);
});

methods('control routes :: POST /status → 405 with Allow: GET, HEAD', async () => {
  const t = setup();
  const res = await send(t.app, 'POST', '/instances/alpha/status', basic('alpha', TOKEN));
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'GET, HEAD');
});

methods.run();

// ---

const audit = suite('control routes :: audit on the bus');

audit(
  'control routes :: an accepted control request emits `control`; one refused at the door, `daemon:request-refused`',
  async () => {
    const t = setup();
    await send(t.app, 'POST', '/instances/alpha/restart', basic('alpha', TOKEN));
    await send(t.app, 'POST', '/instances/alpha/stop', basic('alpha', 'nope'));
    await send(t.app, 'POST', '/instances/alpha/update');
    await send(t.app, 'POST', '/instances/ghost/rollback', basic('ghost', 'x'));
    await send(t.app, 'POST', '/instances/alpha/rollback', basic('mallory', TOKEN));
    const seen = t.controls.map(({ key, action, user, status, result, remote }) => ({
      key,
      action,
      user,
      status,
      result,
      remote,
    }));
    assert.equal(seen, [
      { key: 'alpha', action: 'restart', user: 'alpha', status: 200, result: 'accepted', remote: undefined },
    ]);
    assert.equal(
      t.refused.map(({ route, key, action, user, status }) => ({ route, key, action, user, status })),
      [
        { route: 'control', key: 'alpha', action: 'stop', user: 'alpha', status: 401 },
        { route: 'control', key: 'alpha', action: 'update', user: undefined, status: 401 },
        { route: 'control', key: 'ghost', action: 'rollback', user: 'ghost', status: 404 },
        { route: 'control', key: 'alpha', action: 'rollback', user: 'mallory', status: 403 },
      ],
    );
    for (const e of [...t.controls, ...t.refused]) assert.ok(Math.abs(Date.now() - e.at) < 60_000);
    assert.is(t.refused[0]?.reason, 'wrong token');
    // The routes log none of them themselves: the rate-limited subscriber does (src/daemon/refusal-logs.ts).
    assert.equal(
      t.log.lines.filter((l) => l.includes('refused')),
      [],
    );
  },
);

audit(
  'control routes :: what the instance refuses at once is 409 with the reason, nothing sent, audited as refused and why',
  async () => {
    const t = setup();
    t.alpha.refusal = (action) =>
      action === 'rollback' ? 'no previous build to roll back to (bin.prev is missing)' : null;
    const res = await send(t.app, 'POST', '/instances/alpha/rollback', basic('alpha', TOKEN));
    assert.is(res.status, 409);
    assert.equal(await res.json(), { error: 'no previous build to roll back to (bin.prev is missing)' });
    assert.equal(t.alpha.calls, []);
    assert.is(
      (await send(t.app, 'POST', '/instances/alpha/update', basic('alpha', TOKEN))).status,
      200,
      'what it takes is still 200 at once',
    );
    const [refused, accepted] = t.controls;
    assert.equal(
      { status: refused?.status, result: refused?.result, reason: refused?.reason },
      {
        status: 409,
        result: 'refused',
        reason: 'no previous build to roll back to (bin.prev is missing)',
      },
    );
    assert.is(accepted?.reason, undefined);
  },
);

audit('control routes :: hostile keys and users are cleaned and capped in events and logs', async () => {
  const t = setup();
  const evil = `\u001b[31m${'k'.repeat(5000)}`;
  await send(
    t.app,
    'POST',
    `/instances/${encodeURIComponent(evil)}/restart`,
    basic(`eve\u001b[2J${'u'.repeat(5000)}`, 'x'),
  );
  const e = t.refused[0];
  assert.is(e?.status, 403);
  assert.ok((e?.key?.length ?? 0) <= 201 && (e?.user?.length ?? 0) <= 201, 'capped');
  assert.ok(e?.key?.startsWith('?[31mkkk'));
  assert.ok(e?.user?.startsWith('eve?[2Juuu'));
  assert.not.match(t.log.lines.join('\n'), '\u001b');
});

audit('control routes :: tokens and Authorization headers never reach the log', async () => {
  const t = setup();
  await send(t.app, 'POST', '/instances/alpha/restart', basic('alpha', TOKEN));
  await send(t.app, 'POST', '/instances/alpha/restart', basic('alpha', 'wrong-password-xyz'));
  await send(t.app, 'GET', '/instances/alpha/status', basic('alpha', TOKEN));
  assert.ok(t.log.lines.length >= 1, 'accepted control requests are logged');
  assert.is(t.refused.length, 1, 'the refused one is reported for the rate-limited log');
  assert.not.match(JSON.stringify(t.refused), 'wrong-password-xyz');
  const all = t.log.lines.join('\n');
  assert.not.match(all, TOKEN);
  assert.not.match(all, 'wrong-password-xyz');
  assert.not.match(all, basic('alpha', TOKEN).slice(6));
});

audit('control routes :: status requests are not control requests (no audit event)', async () => {
  const t = setup();
  await send(t.app, 'GET', '/instances/alpha/status', basic('alpha', TOKEN));
  await send(t.app, 'GET', '/instances/alpha/restart', basic('alpha', TOKEN));
  assert.equal(t.controls, []);
});

audit.run();

// ---

const status = suite('control routes :: GET status');

for (const tc of authCases('alpha', TOKEN)) {
  status(`control routes :: GET status: ${tc.name}`, async () => {
    const t = setup();
    const res = await send(t.app, 'GET', `/instances/${tc.key}/status`, tc.header);
    assert.is(res.status, tc.status);
    assert.is(res.headers.get('www-authenticate'), tc.status === 401 ? 'Basic realm="watchdog"' : null);
    if (tc.status === 200) assert.is(((await res.json()) as { key: string }).key, 'alpha');
    assert.equal(t.alpha.calls, []);
  });
}

status('control routes :: status carries every documented field', async () => {
  const t = setup();
  t.alpha.state = 'restarting.backoff';
  const res = await send(t.app, 'GET', '/instances/alpha/status', basic('alpha', TOKEN));
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = (await res.json()) as Record<string, unknown>;
  // What the instance is, and what has happened to it.
  const identity = ['key', 'name', 'state', 'pid', 'revision'];
  const history = ['lastCheckinAt', 'startedAt', 'startupFailures', 'restarts', 'updatePending', 'stopRequested'];
  for (const field of [...identity, ...history]) {
    assert.ok(field in body, `status has ${field}`);
  }
  assert.is(body.state, 'restarting.backoff');
  assert.is(body.pid, 4242);
});

status('control routes :: status of an instance without ApiToken → 401; token with ":" works', async () => {
  const t = setup();
  assert.is((await send(t.app, 'GET', '/instances/untokened/status', basic('untokened', ''))).status, 401);
  assert.is((await send(t.app, 'GET', '/instances/colon/status', basic('colon', 'a:b::c:'))).status, 200);
});

status('control routes :: HEAD status answers like GET without a body', async () => {
  const t = setup();
  const res = await send(t.app, 'HEAD', '/instances/alpha/status', basic('alpha', TOKEN));
  assert.is(res.status, 200);
  assert.is(await res.text(), '');
  assert.is((await send(t.app, 'HEAD', '/instances/alpha/status')).status, 401);
});

status.run();
