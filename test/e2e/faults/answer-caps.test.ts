/**
 * The answer caps are settings: with `Answers.*MaxKilobytes` shrunk to 1 kB, the real daemon refuses answers of
 * 2 kB it would read whole under the defaults (64 kB), from a hub its server's config.toml names, a chat webhook and
 * the address `BaseUrl` names; each refusal names the key that caps it.
 */
import { createServer } from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon, waitState } from '../../_support/daemon.ts';
import { freePort, ROOT, tempDir, waitFor } from '../../_support/env.ts';
import { advertiseTo, type FakeHub, startFakeHub } from '../../_support/fake-hub.ts';
import { serveLoopback, startWebhookReceiver, type WebhookReceiver } from '../../_support/webhook.ts';

const test = suite('e2e faults :: answer caps are settings');
const SERVERS = join(ROOT, 'test/fixtures/servers');
/** 2 kB of JSON: over a 1 kB cap, far under the default ones. */
const TWO_KB = JSON.stringify({ padding: 'x'.repeat(2000) });

test('answer caps :: shrunk in the config, the hub, webhook and BaseUrl answers over them are refused by name', async () => {
  const dir = await tempDir('wd-answer-caps-');
  let hub: FakeHub | null = null;
  let hook: WebhookReceiver | null = null;
  let base: { url: string; close(): Promise<void> } | null = null;
  let d: RunningDaemon | null = null;
  try {
    hub = await startFakeHub();
    hook = await startWebhookReceiver({ answer: TWO_KB });
    base = await serveLoopback(
      createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(TWO_KB)),
      '/',
    );
    const port = await freePort();
    const address = `ss14://127.0.0.1:${port}`;
    await advertiseTo(join(dir.path, 'instances', 'adv'), address, hub.url);
    hub.list(address, 'listed', JSON.stringify({ padding: 'x'.repeat(2000) }));
    const yaml = testConfig({
      webhook: hook.url,
      extra: [
        `BaseUrl: ${base.url}`,
        'Answers:',
        '  HubMaxKilobytes: 1',
        '  NotificationMaxKilobytes: 1',
        '  BaseUrlMaxKilobytes: 1',
      ].join('\n'),
      instances: [
        {
          key: 'adv',
          port,
          runCommand: join(SERVERS, 'console-echo.mjs'),
          extra: '      Hub: { CheckSeconds: 1, MissingMinutes: 60 }',
        },
      ],
    });
    d = await startDaemon(yaml, { dir: dir.path });
    const daemon = d;
    await waitState(daemon, 'adv', 'tok', 'server.running');

    const seen = await waitFor(
      "the hub's answer refused",
      async () => {
        const h = (await daemon.status('adv', 'tok')).hub?.hubs[0];
        return h?.lastError ? h : undefined;
      },
      20_000,
    );
    assert.is(seen.listed, null, 'not known while the hub answers past the cap');
    assert.match(seen.lastError ?? '', /its answer passed 1 kB, the most it may be \(Answers\.HubMaxKilobytes\)/);

    // A hold is a chat message: the webhook answers 2 kB, and the message is dropped for it.
    assert.is(await daemon.control('adv', 'tok', 'hold'), 200);
    await waitFor('the message dropped', () => /message dropped/.test(daemon.log()), 20_000);
    assert.match(
      daemon.log(),
      /message dropped.*HTTP 200, its answer passed 1 kB, the most it may be \(Answers\.NotificationMaxKilobytes\)/,
    );
    assert.ok(hook.messages.length >= 1, 'the webhook was reached');

    await waitFor('the BaseUrl check', () => /BaseUrl .* does not reach this watchdog/.test(daemon.log()), 20_000);
    assert.match(
      daemon.log(),
      /BaseUrl .* does not reach this watchdog from here \(the answer passed 1 kB, the most it may be \(Answers\.BaseUrlMaxKilobytes\)/,
    );
  } finally {
    if (d) await d.stop();
    await hub?.close();
    await hook?.close();
    await base?.close();
    await dir.cleanup();
  }
});

test.run();
