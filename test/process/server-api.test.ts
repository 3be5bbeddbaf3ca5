import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { requestShutdown, requestUpdate } from '../../src/process/server-api.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { recorder } from '../_support/fixture-servers.ts';

const api = suite('server-api');

api('server-api :: requestShutdown posts {"Reason"} as JSON with the WatchdogToken header', async () => {
  const srv = await recorder(() => ({ status: 200 }));
  try {
    assert.is(await requestShutdown(srv.port, 'se+cr/et=', 'Watchdog shutting down.', 2000), true);
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
    assert.is(await requestShutdown(srv.port, 'wrong', 'r', 2000), true);
  } finally {
    await srv.close();
  }
});

api('server-api :: requestUpdate posts /update with the header and no body; true only on 2xx', async () => {
  let status = 200;
  const srv = await recorder(() => ({ status }));
  try {
    assert.is(await requestUpdate(srv.port, 'tok', 2000), true);
    const [req] = srv.requests;
    assert.is(req?.url, '/update');
    assert.is(req?.method, 'POST');
    assert.is(req?.headers.watchdogtoken, 'tok');
    assert.is(req?.body, '');
    assert.is(req?.headers['content-type'], undefined, 'no body, so the game sees reason UpdateAvailable');
    status = 500;
    assert.is(await requestUpdate(srv.port, 'tok', 2000), false);
    status = 404;
    assert.is(await requestUpdate(srv.port, 'tok', 2000), false);
  } finally {
    await srv.close();
  }
});

api('server-api :: nothing listening → false, quickly', async () => {
  const port = await freePort();
  assert.is(await requestShutdown(port, 't', 'r', 2000), false);
  assert.is(await requestUpdate(port, 't', 2000), false);
});

api('server-api :: a server that never answers → false after the timeout', async () => {
  // It would answer 200 (true) after 5 s: false means the call gave up at its timeout instead of waiting.
  const srv = await recorder(() => ({ status: 200, delayMs: 5000 }));
  try {
    assert.is(await requestShutdown(srv.port, 't', 'r', 200), false);
    assert.is(await requestUpdate(srv.port, 't', 200), false);
    await waitFor('both requests to have reached the server', () => srv.requests.length === 2, 5000);
  } finally {
    await srv.close();
  }
});

api.run();
