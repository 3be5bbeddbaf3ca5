/**
 * readCapped against real loopback servers answering without end: it stops past its cap with an error naming the
 * answer and the cap, and the sender sees its connection closed (through fetch and through node:http alike); the
 * kit's check-in reads its answer through it.
 */
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AnswerTooLargeError, readCapped } from '../../src/kit/capped-body.ts';
import { startCheckins } from '../../src/kit/checkin.ts';
import { sendEndless } from '../_support/endless.ts';
import { waitFor } from '../_support/env.ts';
import { captureLog } from '../_support/recording-logger.ts';

interface Endless {
  url: string;
  cutOff: number[];
  close(): Promise<void>;
}

/** Answers every request with `short` when given, else without end. */
async function endlessServer(short?: string): Promise<Endless> {
  const cutOff: number[] = [];
  const server: Server = createServer((_req, res) => {
    if (short !== undefined) return void res.end(short);
    void sendEndless(res, Buffer.from('{')).then((n) => cutOff.push(n));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`,
    cutOff,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const test = suite('kit :: readCapped');
const MB = 1024 * 1024;

test('readCapped :: a short answer is read whole', async () => {
  const s = await endlessServer('{"ok": true}');
  try {
    const res = await fetch(s.url);
    assert.is((await readCapped(res.body, 64_000, 'the answer')).toString('utf8'), '{"ok": true}');
  } finally {
    await s.close();
  }
});

test('readCapped :: an endless fetch body stops past the cap, naming it, and its connection is closed', async () => {
  const s = await endlessServer();
  try {
    const res = await fetch(s.url);
    const err = await readCapped(res.body, 64_000, `the answer of ${s.url}`).catch((e: unknown) => e);
    assert.instance(err, AnswerTooLargeError);
    assert.match(String((err as Error).message), `the answer of ${s.url} passed 64 kB, the most it may be`);
    const sent = await waitFor('the sender to see the connection closed', () => s.cutOff[0], 5_000);
    assert.ok(sent < 32 * MB, `cut off after ${sent} bytes`);
  } finally {
    await s.close();
  }
});

test('readCapped :: an endless node:http answer stops past the cap, and its connection is closed', async () => {
  const s = await endlessServer();
  try {
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) =>
      get(s.url, resolve).on('error', reject),
    );
    const err = await readCapped(res, 2_000_000, 'the status').catch((e: unknown) => e);
    assert.match(String((err as Error).message), 'the status passed 2 MB, the most it may be');
    await waitFor('the sender to see the connection closed', () => s.cutOff[0], 5_000);
  } finally {
    await s.close();
  }
});

test("checkin :: an endless answer to a check-in fails it, naming the cap; the kit's connection is closed", async () => {
  const s = await endlessServer();
  const log = captureLog();
  const c = startCheckins({
    key: 'k',
    baseUrl: s.url.replace(/x$/, ''),
    token: 't',
    intervalSeconds: 3600,
    timeoutMs: 3000,
    log,
  });
  try {
    const r = await c.pingNow();
    assert.is(r?.ok, false);
    assert.is(r?.status, 200);
    assert.match(r?.reason ?? '', /the check-in answer of http:\/\/127\.0\.0\.1:\d+\/server_api\/k\/ping passed 64 kB/);
    await waitFor('the sender to see the connection closed', () => s.cutOff[0], 5_000);
  } finally {
    await c.stop();
    await s.close();
  }
});

test.run();
