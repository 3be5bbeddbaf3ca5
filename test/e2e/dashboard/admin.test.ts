/**
 * The real daemon with `Admin` configured: the dashboard, `/events`, `/metrics` and `/api/instances` ask every
 * client for the credentials, loopback ones included, and a config reload changes them without a restart.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { basic, daemonSuite } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';

const ROUTES = ['/', '/metrics', '/api/instances', '/statechart.svg'];

const adminConfig = (password: string, port: number) =>
  testConfig({
    instances: [{ key: 'demo', port }],
    extra: `Admin:\n  Username: ops\n  Password: ${JSON.stringify(password)}`,
  });

const test = daemonSuite('e2e :: Admin credentials guard the operator routes', {
  ctx: { yaml: '' },
  config: async (ctx) => {
    ctx.yaml = adminConfig('first-secret', await freePort());
    return ctx.yaml;
  },
});

const get = async (url: string, authorization?: string) => {
  const res = await fetch(url, { headers: authorization ? { authorization } : {} });
  await res.body?.cancel();
  return { status: res.status, challenge: res.headers.get('www-authenticate') };
};

test('admin :: a loopback client without credentials is challenged; wrong ones are refused; right ones are served', async ({
  daemon,
}) => {
  const d = daemon!;
  for (const route of ROUTES) {
    const none = await get(d.url + route);
    assert.is(none.status, 401, `${route} without credentials`);
    assert.match(none.challenge ?? '', /^Basic /, `${route} challenges`);
    assert.is((await get(d.url + route, basic('ops', 'wrong'))).status, 401, `${route} with a wrong password`);
    assert.is((await get(d.url + route, basic('someone', 'first-secret'))).status, 401, `${route} with a wrong user`);
    assert.is(
      (await get(d.url + route, basic('ops', 'first-secret'))).status,
      200,
      `${route} with the right credentials`,
    );
  }
  // The event stream: the answer's head is enough (its body never ends).
  const ctl = new AbortController();
  const events = await fetch(`${d.url}/events`, {
    headers: { authorization: basic('ops', 'first-secret') },
    signal: ctl.signal,
  });
  assert.is(events.status, 200);
  assert.match(events.headers.get('content-type') ?? '', /text\/event-stream/);
  ctl.abort();
  assert.is((await get(`${d.url}/events`)).status, 401);
});

test('admin :: a reloaded config with a new password applies at once; the old one is refused', async (ctx) => {
  const d = ctx.daemon!;
  const file = join(d.dir, 'appsettings.yml');
  assert.ok((await readFile(file, 'utf8')).includes('first-secret'));
  await writeFile(file, ctx.yaml.replace('first-secret', 'second-secret'));
  d.proc.kill('SIGHUP');
  await waitFor(
    'the new Admin password',
    async () => (await get(`${d.url}/metrics`, basic('ops', 'second-secret'))).status === 200 || undefined,
    10_000,
    100,
  );
  assert.is((await get(`${d.url}/metrics`, basic('ops', 'first-secret'))).status, 401);
  // Control requests are not Admin's: the instance token still works as before.
  assert.is((await d.status('demo', 'tok')).key, 'demo');
});

test.run();
