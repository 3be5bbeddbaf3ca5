import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { AnswersSchema } from '../../src/config/sections/answers.ts';
import { checkBaseUrlReachesUs } from '../../src/daemon/base-url-check.ts';
import { recordingLogger } from '../_support/recording-logger.ts';

/** A loopback /health that answers with `pid`, standing in for a daemon (this one, or another). */
async function health(pid: number): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.url === '/health' ? { status: 'ok', pid } : { error: 'not found' }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

/** The default caps. */
const ANSWERS = v.parse(AnswersSchema, {});

const close = (server: Server) => new Promise<void>((r) => server.close(() => r()));

const test = suite('BaseUrl check');

test('base-url-check :: a BaseUrl that reaches this process passes quietly', async () => {
  const { server, baseUrl } = await health(process.pid);
  const log = recordingLogger();
  try {
    assert.is(await checkBaseUrlReachesUs(baseUrl, log, ANSWERS), true);
    assert.equal(log.lines, []);
  } finally {
    await close(server);
  }
});

test('base-url-check :: another watchdog answering: a warning naming the symptom and the fix', async () => {
  const { server, baseUrl } = await health(process.pid + 1);
  const log = recordingLogger();
  try {
    assert.is(await checkBaseUrlReachesUs(baseUrl, log, ANSWERS), false);
    assert.is(log.lines.length, 1);
    assert.is(log.lines[0]?.level, 'warn');
    assert.match(
      log.lines[0]?.msg ?? '',
      /not from this watchdog .*clients given it.*Game servers are not affected.*Fix BaseUrl/,
    );
  } finally {
    await close(server);
  }
});

test('base-url-check :: nothing listening: a warning that it does not reach this watchdog', async () => {
  const { server, baseUrl } = await health(process.pid);
  await close(server); // the port is now closed
  const log = recordingLogger();
  assert.is(await checkBaseUrlReachesUs(baseUrl, log, { ...ANSWERS, BaseUrlTimeoutSeconds: 1 }), false);
  assert.match(
    log.lines[0]?.msg ?? '',
    new RegExp(
      `BaseUrl ${baseUrl.replace(/[.]/g, '\\.')} does not reach this watchdog from here .*client downloads.*Game servers are not affected`,
    ),
  );
});

test.run();
