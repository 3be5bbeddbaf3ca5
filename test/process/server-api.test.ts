import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readPlayers, requestShutdown, requestUpdate } from '../../src/process/server-api.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { recorder } from '../_support/fixture-servers.ts';

const api = suite('server-api');
/** The default caps (Answers.ServerMaxKilobytes) with a wait of `timeoutMs`. */
const within = (timeoutMs: number) => ({ timeoutMs, maxBytes: 256_000 });

api('server-api :: requestShutdown posts {"Reason"} as JSON with the WatchdogToken header', async () => {
  const srv = await recorder(() => ({ status: 200 }));
  try {
    assert.is(await requestShutdown(srv.port, 'se+cr/et=', 'Watchdog shutting down.', within(2000)), true);
    const [req] = srv.requests;
    assert.is(req?.method, 'POST');
    assert.is(req?.url, '/shutdown');
    assert.is(req?.headers.watchdogtoken, 'se+cr/et=');
    assert.is(req?.headers['content-type'], 'application/json');
    assert.equal(JSON.parse(req?.body ?? 'null'), { Reason: 'Watchdog shutting down.' });
  } finally {
    await srv.close();
  }
});

api('server-api :: any HTTP answer counts as delivered for /shutdown (the status is not checked)', async () => {
  const srv = await recorder(() => ({ status: 401 }));
  try {
    assert.is(await requestShutdown(srv.port, 'wrong', 'r', within(2000)), true);
  } finally {
    await srv.close();
  }
});

api('server-api :: requestUpdate posts /update with the header and no body; true only on 2xx', async () => {
  let status = 200;
  const srv = await recorder(() => ({ status }));
  try {
    assert.is(await requestUpdate(srv.port, 'tok', within(2000)), true);
    const [req] = srv.requests;
    assert.is(req?.url, '/update');
    assert.is(req?.method, 'POST');
    assert.is(req?.headers.watchdogtoken, 'tok');
    assert.is(req?.body, '');
    assert.is(req?.headers['content-type'], undefined, 'no body, so the game sees reason UpdateAvailable');
    status = 500;
    assert.is(await requestUpdate(srv.port, 'tok', within(2000)), false);
    status = 404;
    assert.is(await requestUpdate(srv.port, 'tok', within(2000)), false);
  } finally {
    await srv.close();
  }
});

api('server-api :: nothing listening → false, quickly', async () => {
  const port = await freePort();
  assert.is(await requestShutdown(port, 't', 'r', within(2000)), false);
  assert.is(await requestUpdate(port, 't', within(2000)), false);
});

api('server-api :: a server that never answers → false after the timeout', async () => {
  // It would answer 200 (true) after 5 s: false means the call gave up at its timeout instead of waiting.
  const srv = await recorder(() => ({ status: 200, delayMs: 5000 }));
  try {
    assert.is(await requestShutdown(srv.port, 't', 'r', within(200)), false);
    assert.is(await requestUpdate(srv.port, 't', within(200)), false);
    await waitFor('both requests to have reached the server', () => srv.requests.length === 2, 5000);
  } finally {
    await srv.close();
  }
});

api('server-api :: a /status answer past Answers.ServerMaxKilobytes is no player count', async () => {
  // 1.6 kB of JSON: read whole under a 2 kB cap, refused under a 1 kB one.
  const body = JSON.stringify({ players: 7, name: 'x'.repeat(1600) });
  const srv = await recorder(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body }));
  try {
    assert.is(await readPlayers(srv.port, { timeoutMs: 2000, maxBytes: 2000 }), 7);
    assert.is(await readPlayers(srv.port, { timeoutMs: 2000, maxBytes: 1000 }), null);
  } finally {
    await srv.close();
  }
});

api.run();
