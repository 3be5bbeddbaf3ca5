import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type CheckinResult,
  type Checkins,
  checkinOptionsFrom,
  checkinUrl,
  startCheckins,
} from '../../src/kit/checkin.ts';
import { loadSettings } from '../../src/kit/settings.ts';
import type { Logger } from '../../src/log.ts';
import { freePort, waitFor, within } from '../_support/env.ts';
import { recorder } from '../_support/fixture-servers.ts';
import { captureLog } from '../_support/recording-logger.ts';

/** A loopback HTTP server in the watchdog's place. `answer` picks the status; null never answers. */
async function fakeWatchdog(answer: () => number | null = () => 200) {
  const rec = await recorder(() => {
    const status = answer();
    return status === null ? null : { status };
  });
  return { seen: rec.requests, base: `http://127.0.0.1:${rec.port}`, close: rec.close };
}

/** A logger keeping `level msg {fields}` lines. */
function collect(): { log: Logger; lines: string[] } {
  const log = captureLog();
  return { log, lines: log.lines };
}

const url = suite('checkin :: URL resolution');
const URLS: Array<[string, string]> = [
  ['http://localhost:5000', 'http://localhost:5000/server_api/k1/ping'],
  ['http://localhost:5000/', 'http://localhost:5000/server_api/k1/ping'],
  ['http://h:5000/wd/', 'http://h:5000/wd/server_api/k1/ping'],
  ['http://h:5000/wd', 'http://h:5000/server_api/k1/ping'], // the engine's quirk: the last segment is lost
  ['http://[::]:5000', 'http://[::]:5000/server_api/k1/ping'],
  ['https://wd.example/a/b', 'https://wd.example/a/server_api/k1/ping'],
];
for (const [base, expected] of URLS) {
  url(`checkin :: ${base} → ${expected}`, () => assert.is(checkinUrl(base, 'k1').href, expected));
}
url('checkin :: cvars: watchdog.key, watchdog.baseUrl, token from the env, checkin_interval', () => {
  const s = loadSettings({
    argv: [
      '--cvar',
      'watchdog.key=k',
      '--cvar',
      'watchdog.baseUrl=http://x/',
      '--cvar',
      'watchdog.checkin_interval=0.5',
    ],
    env: { ROBUST_CVAR_watchdog__token: 't' },
  });
  assert.equal(checkinOptionsFrom(s), { key: 'k', baseUrl: 'http://x/', token: 't', intervalSeconds: 0.5 });
  assert.is(checkinOptionsFrom(loadSettings({ argv: [] })).intervalSeconds, 15);
});
url.run();

// ---
const pings = suite('checkin :: pinging');

pings('checkin :: first at once, then every interval: POST, path, Basic key:token, no body', async () => {
  const wd = await fakeWatchdog();
  const { log } = collect();
  const results: CheckinResult[] = [];
  const c = startCheckins({
    key: 'demo',
    baseUrl: wd.base,
    token: 'se:cr+t/=',
    intervalSeconds: 0.1,
    log,
    onResult: (r) => results.push(r),
  });
  try {
    assert.ok(c.enabled);
    await waitFor('three check-ins', () => wd.seen.length >= 3);
    for (const s of wd.seen) {
      assert.is(s.method, 'POST');
      assert.is(s.url, '/server_api/demo/ping');
      assert.is(s.headers.authorization, `Basic ${Buffer.from('demo:se:cr+t/=').toString('base64')}`);
      assert.is(s.body, '');
      assert.is(s.headers['content-type'], undefined);
    }
    assert.ok(results.every((r) => r.ok && r.status === 200));
  } finally {
    await c.stop();
    await wd.close();
  }
});

pings('checkin :: the first ping does not wait for the interval', async () => {
  const wd = await fakeWatchdog();
  const c = startCheckins({ key: 'k', baseUrl: wd.base, token: 't', intervalSeconds: 3600, log: collect().log });
  try {
    await waitFor('first check-in', () => wd.seen.length === 1);
  } finally {
    await c.stop();
    await wd.close();
  }
});

for (const [missing, opts] of [
  ['key', { key: '', baseUrl: 'http://127.0.0.1:9/', token: 't' }],
  ['baseUrl', { key: 'k', baseUrl: undefined, token: 't' }],
  ['token', { key: 'k', baseUrl: 'http://127.0.0.1:9/', token: undefined }],
  ['a valid baseUrl', { key: 'k', baseUrl: 'not a url', token: 't' }],
] as const) {
  pings(`checkin :: without ${missing} nothing is sent`, async () => {
    const { log, lines } = collect();
    const c = startCheckins({ ...opts, log });
    assert.not.ok(c.enabled);
    assert.is(await c.pingNow(), null);
    assert.ok(lines.some((l) => /check-ins off/.test(l)));
    await c.stop();
  });
}

pings('checkin :: a refused check-in is logged with status and reason, never thrown, and retried', async () => {
  const wd = await fakeWatchdog(() => 401);
  const { log, lines } = collect();
  const c = startCheckins({ key: 'k', baseUrl: wd.base, token: 'hunter2', intervalSeconds: 0.1, log });
  try {
    await waitFor('two attempts', () => wd.seen.length >= 2);
    const r = await c.pingNow();
    assert.equal(r && { ok: r.ok, status: r.status }, { ok: false, status: 401 });
    const warn = lines.find((l) => l.startsWith('warn check-in failed'));
    assert.ok(warn, lines.join('\n'));
    assert.match(warn, /"status":401/);
    assert.match(warn, /"reason":"Unauthorized"/);
    assert.not.ok(lines.join('\n').includes('hunter2'), 'the token is never logged');
  } finally {
    await c.stop();
    await wd.close();
  }
});

pings('checkin :: an unreachable watchdog is logged with the transport error', async () => {
  const port = await freePort();
  const { log, lines } = collect();
  const c = startCheckins({ key: 'k', baseUrl: `http://127.0.0.1:${port}/`, token: 't', intervalSeconds: 60, log });
  try {
    const r = await c.pingNow();
    assert.is(r?.status, null);
    assert.match(r?.reason ?? '', /ECONNREFUSED|fetch failed/);
    await waitFor('warning', () =>
      lines.some((l) => l.startsWith('warn check-in failed') && l.includes('"status":null')),
    );
  } finally {
    await c.stop();
  }
});

pings('checkin :: stop(): no further check-ins, and a hanging attempt is aborted promptly', async () => {
  let answering = true;
  const wd = await fakeWatchdog(() => (answering ? 200 : null));
  const c: Checkins = startCheckins({
    key: 'k',
    baseUrl: wd.base,
    token: 't',
    intervalSeconds: 0.1,
    timeoutMs: 60_000,
    log: collect().log,
  });
  try {
    await waitFor('two check-ins', () => wd.seen.length >= 2);
    answering = false;
    const count = wd.seen.length;
    await waitFor('a hanging attempt', () => wd.seen.length > count);
    // The hanging attempt would end at its 60 s timeout: stop() returning long before that aborted it.
    await within(30_000, 'stop() with an attempt hanging', c.stop());
    const ofK = () => wd.seen.filter((r) => r.url.includes('/server_api/k/')).length;
    const after = ofK();
    // The later marker: a second client at the same pace checks in three times meanwhile (two of its intervals).
    answering = true;
    const other = startCheckins({ key: 'k2', baseUrl: wd.base, token: 't', intervalSeconds: 0.1, log: collect().log });
    try {
      await waitFor('three check-ins of a second client', () =>
        wd.seen.filter((r) => r.url.includes('/server_api/k2/')).length >= 3 ? true : undefined,
      );
    } finally {
      await other.stop();
    }
    assert.is(ofK(), after, 'nothing sent after stop');
    assert.is(await c.pingNow(), null);
  } finally {
    await c.stop();
    await wd.close();
  }
});
pings.run();
