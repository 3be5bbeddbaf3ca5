import { readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startDemo } from '../_support/demo.ts';
import { tempDir, waitFor } from '../_support/env.ts';

interface Ping {
  method: string;
  url: string;
  authorization: string | undefined;
  userAgent: string | undefined;
  body: string;
}

/** A loopback HTTP server in the watchdog's place, recording check-ins. */
async function fakeWatchdog() {
  const pings: Ping[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      pings.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization,
        userAgent: req.headers['user-agent'],
        body,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    pings,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const test = suite('demo :: check-ins with a watchdog on loopback');

// 64 random bytes in base64, like the watchdog's secret: may contain + / =.
const SECRET = Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 37 + 11) % 256)).toString('base64');

test('checkin :: launched exactly as the watchdog launches it: well-formed check-ins, at once and then repeatedly', async () => {
  const wd = await fakeWatchdog();
  const dir = await tempDir('wd-demo-');
  const demo = await startDemo(
    [
      '--cvar',
      'watchdog.key=alpha',
      '--cvar',
      `watchdog.baseUrl=http://localhost:${wd.port}/`,
      '--config-file',
      join(dir.path, 'config.toml'),
      '--data-dir',
      join(dir.path, 'data'),
      '--cvar',
      'watchdog.checkin_interval=0.2',
    ],
    { env: { ROBUST_CVAR_watchdog__token: SECRET }, cwd: dir.path },
  );
  try {
    await waitFor('three check-ins', () => wd.pings.length >= 3);
    for (const p of wd.pings) {
      assert.is(p.method, 'POST');
      assert.is(p.url, '/server_api/alpha/ping');
      assert.is(p.authorization, `Basic ${Buffer.from(`alpha:${SECRET}`).toString('base64')}`);
      assert.is(p.body, '');
      assert.ok(p.userAgent, 'a User-Agent is sent');
    }
    assert.not.ok(demo.output().includes(SECRET), 'the secret is never logged');
    assert.equal(
      await readdir(dir.path),
      [],
      'a missing config.toml is not created; nothing written outside the data dir yet',
    );
  } finally {
    await demo.kill();
    await wd.close();
    await dir.cleanup();
  }
});

test('checkin :: a base URL without a trailing slash (the real watchdog sends http://localhost:5000) works', async () => {
  const wd = await fakeWatchdog();
  const demo = await startDemo(
    [
      '--cvar',
      'watchdog.key=b',
      '--cvar',
      `watchdog.baseUrl=http://127.0.0.1:${wd.port}`,
      '--cvar',
      'watchdog.checkin_interval=0.2',
    ],
    {
      env: { ROBUST_CVAR_watchdog__token: 'tok' },
    },
  );
  try {
    await waitFor('a check-in', () => wd.pings.length >= 1);
    assert.is(wd.pings[0]?.url, '/server_api/b/ping');
  } finally {
    await demo.kill();
    await wd.close();
  }
});

test('checkin :: no check-ins without a token; the log says why', async () => {
  const wd = await fakeWatchdog();
  const demo = await startDemo([
    '--cvar',
    'watchdog.key=c',
    '--cvar',
    `watchdog.baseUrl=http://127.0.0.1:${wd.port}/`,
    '--cvar',
    'watchdog.checkin_interval=0.1',
  ]);
  try {
    await waitFor('the log line', () => /check-ins off: watchdog.token not set/.test(demo.output()));
    // The later marker: the server answers /status, so it is past its start (a first check-in goes out at once);
    // then its whole life is over, and no check-in came in it.
    assert.is((await fetch(`${demo.base}/status`)).status, 200);
    await demo.kill();
    assert.is(wd.pings.length, 0);
  } finally {
    await demo.kill();
    await wd.close();
  }
});

test('checkin :: an unreachable watchdog is logged, and the server keeps serving', async () => {
  const wd = await fakeWatchdog();
  await wd.close(); // nobody listens on this port any more
  const demo = await startDemo(
    [
      '--cvar',
      'watchdog.key=d',
      '--cvar',
      `watchdog.baseUrl=http://127.0.0.1:${wd.port}/`,
      '--cvar',
      'watchdog.checkin_interval=0.2',
    ],
    {
      env: { ROBUST_CVAR_watchdog__token: 'tok' },
    },
  );
  try {
    await waitFor('a failure line', () => /check-in failed/.test(demo.output()));
    assert.is((await fetch(`${demo.base}/status`)).status, 200);
    assert.is(demo.exit(), undefined);
  } finally {
    await demo.kill();
  }
});
test.run();
