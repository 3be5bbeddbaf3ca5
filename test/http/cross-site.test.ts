/**
 * Cross-site requests (src/http/cross-site.ts): a state-changing request a browser marks as sent from another site
 * is refused with 403 and an audit line on every route but the check-ins; the CLI, a CDN and curl (neither Origin
 * nor Sec-Fetch-Site) are unaffected, and so is the dashboard on its own origin.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BusEvents } from '../../src/bus.ts';
import { createBus } from '../../src/bus.ts';
import { DASHBOARD_HEADER } from '../../src/http/api-routes.ts';
import { createApp } from '../../src/http/app.ts';
import { createAuditLog } from '../../src/http/audit.ts';
import { crossSiteReason } from '../../src/http/cross-site.ts';
import { tempDir } from '../_support/env.ts';
import { basic, fromLoopback, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';

function setup(ownOrigins: string[] = []) {
  const alpha = memoryInstance('alpha', { apiToken: 't', secret: 's' });
  const bus = createBus();
  const controls: BusEvents['instance:control'][] = [];
  bus.on('instance:control', (e) => controls.push(e));
  const refusals: BusEvents['daemon:request-refused'][] = [];
  bus.on('daemon:request-refused', (e) => refusals.push(e));
  const app = fromLoopback(
    createApp({
      registry: memoryRegistry(alpha),
      bus,
      log: recordingLogger(),
      version: '1',
      ownOrigins: () => ownOrigins,
    }),
  );
  return { app, alpha, bus, controls, refusals };
}

const HOST = 'watchdog.test:5000';

/** POST /instances/alpha/restart with the right credentials and these browser headers. */
function restart(ctx: ReturnType<typeof setup>, headers: Record<string, string>, path = '/instances/alpha/restart') {
  return ctx.app.request(`http://${HOST}${path}`, {
    method: 'POST',
    headers: { authorization: basic('alpha', 't'), host: HOST, ...headers },
  });
}

// ---

const refused = suite('cross-site :: refused');

const REFUSED: Array<[string, Record<string, string>, string]> = [
  ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }, 'Sec-Fetch-Site: cross-site'],
  [
    'Sec-Fetch-Site: cross-site with an Origin that looks own',
    { 'sec-fetch-site': 'cross-site', origin: `http://${HOST}` },
    'Sec-Fetch-Site: cross-site',
  ],
  ['an Origin of another site', { origin: 'http://evil.example' }, 'http://evil.example'],
  ['Origin: null (a sandboxed page, a file)', { origin: 'null' }, '"null"'],
  ['an Origin on another port of this host', { origin: 'http://watchdog.test:6000' }, 'watchdog.test:6000'],
  [
    'Sec-Fetch-Site: same-site from another origin',
    { 'sec-fetch-site': 'same-site', origin: 'http://other.watchdog.test:5000' },
    'other.watchdog.test',
  ],
  ['Sec-Fetch-Site: same-site without an Origin', { 'sec-fetch-site': 'same-site' }, 'Sec-Fetch-Site: same-site'],
];

for (const [name, headers, why] of REFUSED) {
  refused(`cross-site :: ${name} → 403, not acted on, audited`, async () => {
    const ctx = setup();
    const res = await restart(ctx, headers);
    assert.is(res.status, 403);
    const body = (await res.json()) as { error: string };
    assert.match(body.error, /^cross-site request refused: /);
    assert.match(body.error, why);
    assert.equal(ctx.alpha.calls, [], 'the restart was not done');
    // Before any credentials: a refused-request fact (rate-limited by source), not a control event.
    assert.is(ctx.controls.length, 0);
    assert.is(ctx.refusals.length, 1);
    const e = ctx.refusals[0]!;
    assert.equal(
      { route: e.route, key: e.key, action: e.action, status: e.status, remote: e.remote, reason: e.reason },
      { route: 'cross-site', key: 'alpha', action: 'restart', status: 403, remote: '127.0.0.1', reason: body.error },
    );
  });
}

refused('cross-site :: the dashboard API refuses a cross-site POST even with its custom header', async () => {
  const ctx = setup();
  const res = await restart(
    ctx,
    { origin: 'http://evil.example', [DASHBOARD_HEADER]: '1' },
    '/api/instances/alpha/stop',
  );
  assert.is(res.status, 403);
  assert.match(((await res.json()) as { error: string }).error, 'cross-site');
  assert.equal(ctx.alpha.calls, []);
  assert.is(ctx.refusals[0]?.action, 'stop');
});

refused('cross-site :: the refusal is one JSON line in audit.log; a flood of them is summarised', async () => {
  const tmp = await tempDir('wd-xsite-');
  try {
    const ctx = setup();
    const file = join(tmp.path, 'logs', 'audit.log');
    const audit = createAuditLog({ file, bus: ctx.bus });
    for (let i = 0; i < 201; i++)
      await restart(ctx, { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' });
    await audit.close();
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    // The first in full; the other 200, sent by anyone without credentials, as one summary line.
    assert.is(lines.length, 2, lines.join('\n'));
    assert.is((JSON.parse(lines[1]!) as { refused: number }).refused, 200);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.is(line.status, 403);
    assert.is(line.result, 'refused');
    assert.is(line.key, 'alpha');
    assert.is(line.action, 'restart');
    assert.match(String(line.reason), 'cross-site request refused');
    assert.is(line.route, 'cross-site');
    assert.is(line.remote, '127.0.0.1');
    assert.not.match(lines[0]!, basic('alpha', 't').slice(6), 'no credentials in the line');
  } finally {
    await tmp.cleanup();
  }
});

refused.run();

// ---

const allowed = suite('cross-site :: allowed');

const ALLOWED: Array<[string, Record<string, string>, string[]?]> = [
  ['no Origin and no Sec-Fetch-Site (the CLI, a CDN, curl)', {}],
  ['Sec-Fetch-Site: none (typed by the user)', { 'sec-fetch-site': 'none' }],
  ['same-origin, Origin = the Host it was sent to', { 'sec-fetch-site': 'same-origin', origin: `http://${HOST}` }],
  ['an https Origin for the Host a TLS proxy forwarded', { origin: `https://${HOST}` }],
  [
    'an Origin naming BaseUrl while the proxy rewrote the Host',
    { origin: 'https://wd.example.org' },
    ['https://wd.example.org/'],
  ],
  ['an Origin naming an address the daemon listens on', { origin: 'http://127.0.0.1:5000' }, ['http://127.0.0.1:5000']],
];

for (const [name, headers, own] of ALLOWED) {
  allowed(`cross-site :: ${name} → 200, done`, async () => {
    const ctx = setup(own);
    const res = await restart(ctx, headers);
    assert.is(res.status, 200, await res.clone().text());
    assert.equal(ctx.alpha.calls, ['control:restart']);
    assert.is(ctx.controls[0]?.result, 'accepted');
  });
}

allowed('cross-site :: the dashboard on its own origin keeps working', async () => {
  const ctx = setup();
  const res = await restart(
    ctx,
    { origin: `http://${HOST}`, 'sec-fetch-site': 'same-origin', [DASHBOARD_HEADER]: '1' },
    '/api/instances/alpha/restart',
  );
  // The dashboard's loopback rule wants a loopback Host; the cross-site guard let it through to that rule.
  assert.is(res.status, 403);
  assert.not.match(((await res.json()) as { error: string }).error, 'cross-site');
  const local = await ctx.app.request('http://localhost:5000/api/instances/alpha/restart', {
    method: 'POST',
    headers: {
      host: 'localhost:5000',
      origin: 'http://localhost:5000',
      'sec-fetch-site': 'same-origin',
      [DASHBOARD_HEADER]: '1',
    },
  });
  assert.is(local.status, 200, await local.clone().text());
  assert.equal(ctx.alpha.calls, ['control:restart']);
});

allowed('cross-site :: reads and check-ins are not guarded', async () => {
  const ctx = setup();
  const evil = { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', host: HOST };
  const status = await ctx.app.request(`http://${HOST}/instances/alpha/status`, {
    headers: { ...evil, authorization: basic('alpha', 't') },
  });
  assert.is(status.status, 200);
  const ping = await ctx.app.request(`http://${HOST}/server_api/alpha/ping`, {
    method: 'POST',
    headers: { ...evil, authorization: basic('alpha', 's') },
  });
  assert.is(ping.status, 200, await ping.clone().text());
  assert.equal(ctx.alpha.calls, ['checkin']);
  assert.equal(ctx.controls, []);
});

allowed('cross-site :: crossSiteReason on its own', () => {
  const h = (o: Record<string, string>) => (name: string) => o[name];
  assert.is(crossSiteReason(h({}), []), null);
  assert.is(crossSiteReason(h({ origin: 'http://a:1', host: 'a:1' }), []), null);
  assert.is(crossSiteReason(h({ origin: 'http://a', host: 'a:80' }), []), null, 'default port');
  assert.ok(crossSiteReason(h({ origin: 'http://a:1' }), []) !== null, 'no Host, no own origin');
  assert.ok(crossSiteReason(h({ origin: 'ftp://a:1', host: 'a:1' }), []) !== null, 'not a web origin');
  assert.ok(crossSiteReason(h({ origin: 'junk', host: 'a' }), []) !== null);
});

allowed.run();
