import * as assert from 'uvu/assert';
import { testConfig } from '../_support/config.ts';
import { basic, daemonSuite, type RunningDaemon, waitState } from '../_support/daemon.ts';
import { freePort } from '../_support/env.ts';
import { launchSecret } from './resilience/_support/daemon-crash.ts';

// A token with ':' in it: the password is everything after the FIRST colon (RFC 7617; the real watchdog refuses it).
const TOKEN = 'to:k:en';

const test = daemonSuite<{ secret?: string }>('e2e :: auth order on the real daemon', {
  config: async () =>
    testConfig({
      instances: [
        { key: 'alpha', token: TOKEN, port: await freePort() },
        { key: 'beta', token: null, port: await freePort() },
      ],
    }),
  before: async (ctx) => {
    const s = await waitState(ctx.daemon!, 'alpha', TOKEN, 'server.running');
    ctx.secret = await launchSecret(s.pid!);
  },
});

const raw = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

async function call(d: RunningDaemon, method: string, path: string, authorization?: string) {
  const res = await fetch(`${d.url}${path}`, { method, headers: authorization === undefined ? {} : { authorization } });
  await res.arrayBuffer();
  return res;
}

test('auth :: control and ping: every auth case answers its status code', async ({ daemon, secret }) => {
  const d = daemon!;
  assert.ok(secret, 'read the launch secret');
  const families: Array<{ path: (k: string) => string; good: string }> = [
    // Ping first: the restarts that answer 200 below end the launch whose secret it uses. (An update without a
    // provider would be refused with 409.)
    { path: (k) => `/server_api/${k}/ping`, good: secret! },
    { path: (k) => `/instances/${k}/restart`, good: TOKEN },
  ];
  for (const f of families) {
    const no = await call(d, 'POST', f.path('alpha'));
    assert.is(no.status, 401, `${f.path('alpha')} without header`);
    assert.match(no.headers.get('www-authenticate') ?? '', /^Basic/i);
    assert.is((await call(d, 'POST', f.path('alpha'), 'Bearer abc')).status, 401, 'non-Basic scheme');
    assert.is((await call(d, 'POST', f.path('alpha'), 'Basic !!!not-base64!!!')).status, 400, 'bad base64');
    assert.is(
      (await call(d, 'POST', f.path('alpha'), `Basic ${Buffer.from('nocolon').toString('base64')}`)).status,
      400,
      'no colon',
    );
    assert.is((await call(d, 'POST', f.path('alpha'), raw('beta', f.good))).status, 403, 'user is not the key');
    assert.is((await call(d, 'POST', f.path('ghost'), raw('ghost', f.good))).status, 404, 'unknown instance');
    const wrong = await call(d, 'POST', f.path('alpha'), raw('alpha', 'wrong'));
    assert.is(wrong.status, 401, 'wrong password');
    assert.match(wrong.headers.get('www-authenticate') ?? '', /^Basic/i);
    assert.is((await call(d, 'POST', f.path('alpha'), raw('alpha', f.good))).status, 200, 'right credentials');
    assert.is(
      (await call(d, 'POST', f.path('alpha'), `basic ${Buffer.from(`alpha:${f.good}`).toString('base64')}`)).status,
      200,
      'scheme is case-insensitive',
    );
  }
});

test('auth :: an instance without ApiToken refuses control; wrong methods are refused', async ({ daemon }) => {
  const d = daemon!;
  assert.is((await call(d, 'POST', '/instances/beta/restart', basic('beta', ''))).status, 401);
  assert.is((await call(d, 'POST', '/instances/beta/restart', basic('beta', 'anything'))).status, 401);
  const get = await call(d, 'GET', '/instances/alpha/restart', basic('alpha', TOKEN));
  assert.ok(get.status === 404 || get.status === 405, `GET on a control route: ${get.status}`);
});

test('auth :: padlock and health answer without auth', async ({ daemon }) => {
  const d = daemon!;
  const pad = await fetch(`${d.url}/watchdog/padlock`);
  assert.is(pad.status, 200);
  assert.is(await pad.text(), ' --\n|  |\n####\n####\n');
  const health = await fetch(`${d.url}/health`);
  assert.is(health.status, 200);
});

test.run();
