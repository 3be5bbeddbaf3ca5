import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../_support/config.ts';
import { basic, daemonSuite, type RunningDaemon } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import { type RawRequest, rawRequest } from '../_support/http-request.ts';

/**
 * Browsers against the control API, on the real daemon: a cross-site POST is refused with 403 and a line in
 * logs/audit.log while curl's is taken; with TrustedProxies the dashboard's loopback rule follows the forwarded
 * client (the test's requests leave from 127.0.0.5, the configured proxy).
 */
const TOKEN = 'tok';
const PROXY = '127.0.0.5';

const test = daemonSuite('e2e :: cross-site requests and a trusted proxy', {
  config: async () =>
    testConfig({
      instances: [{ key: 'alpha', port: await freePort(), runCommand: fixture('echo-env.mjs') }],
      // A top-level key after the Timing entries.
      extra: `TrustedProxies: [${PROXY}]`,
    }),
});

const send = (d: RunningDaemon, path: string, opts: RawRequest) => rawRequest(new URL(path, d.url), opts);

const auditLines = async (dir: string) =>
  (await readFile(join(dir, 'logs/audit.log'), 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test('cross-site :: a cross-site POST is refused with 403 and audited; the same POST from curl is taken', async ({
  daemon,
  dir,
}) => {
  const d = daemon!;
  const auth = { authorization: basic('alpha', TOKEN) };
  const evil = await send(d, '/instances/alpha/stop', {
    method: 'POST',
    headers: { ...auth, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
  });
  assert.is(evil.status, 403);
  assert.match(evil.body, 'cross-site request refused');
  const line = await waitFor('the audit line', async () => (await auditLines(dir)).find((l) => l.status === 403));
  assert.is(line.action, 'stop');
  assert.is(line.key, 'alpha');
  assert.is(line.remote, '127.0.0.1');
  assert.match(String(line.reason), 'Sec-Fetch-Site: cross-site');
  // Under load the supervisor may still be starting (503) when the refused request is already answered.
  const s = await waitFor('the status', async () => {
    const res = await fetch(`${d.url}/instances/alpha/status`, { headers: auth });
    return res.ok ? ((await res.json()) as { stopRequested: boolean }) : undefined;
  });
  assert.is(s.stopRequested, false, 'not stopped');

  const curl = await send(d, '/instances/alpha/stop', { method: 'POST', headers: auth });
  assert.is(curl.status, 200, curl.body);
  await waitFor('the accepted audit line', async () => (await auditLines(dir)).some((l) => l.status === 200));
});

test('cross-site :: through the trusted proxy, only a local forwarded client passes the loopback rule', async ({
  daemon,
}) => {
  const d = daemon!;
  const remote = await send(d, '/api/instances', { from: PROXY, headers: { 'x-forwarded-for': '203.0.113.9' } });
  assert.is(remote.status, 403, remote.body);
  const local = await send(d, '/api/instances', { from: PROXY, headers: { 'x-forwarded-for': '127.0.0.1' } });
  assert.is(local.status, 200, local.body);
  const untrusted = await send(d, '/api/instances', {
    from: '127.0.0.9',
    headers: { 'x-forwarded-for': '127.0.0.1' },
  });
  assert.is(untrusted.status, 403, untrusted.body);
  assert.match(untrusted.body, 'came through a proxy on this machine');
});

test.run();
