/**
 * Answers without end, through the real daemon: a game server whose `GET /status` streams bytes for ever once told
 * to, a hub (named by the server's own config.toml) whose listing answer does, and a chat webhook. The daemon reads each up to its
 * cap and hangs up: the senders see it stop after a few hundred kB, `/health` keeps answering within 1 s, the
 * daemon's RSS stays within 100 MB of its idle figure while the answers go on, and the server runs on.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon, waitState } from '../../_support/daemon.ts';
import { idleRss, unharmedWhile } from '../../_support/daemon-watch.ts';
import { freePort, ROOT, tempDir, waitFor } from '../../_support/env.ts';
import { advertiseTo, type FakeHub, startFakeHub } from '../../_support/fake-hub.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../_support/webhook.ts';

const test = suite('e2e faults :: endless answers');
const SERVERS = join(ROOT, 'test/fixtures/servers');
/** Each answer stops near its cap (256 kB at most); what the kernel's socket buffers held on top is a few MB. */
const CUT_OFF_BELOW = 32 * 1024 * 1024;

test("endless :: a server's endless GET /status is cut off at its cap; the daemon and the server carry on", async () => {
  const dir = await tempDir('wd-endless-status-');
  let d: RunningDaemon | null = null;
  try {
    const port = await freePort();
    const trigger = join(dir.path, 'endless');
    const yaml = testConfig({
      extra: '  ResourceSampleSeconds: 0.5',
      instances: [
        {
          key: 'srv',
          port,
          runCommand: join(SERVERS, 'endless-status.mjs'),
          extra: `      EnvironmentVariables: { ENDLESS_FILE: ${JSON.stringify(trigger)} }`,
        },
      ],
    });
    d = await startDaemon(yaml, { dir: dir.path });
    const daemon = d;
    const running = await waitState(daemon, 'srv', 'tok', 'server.running');
    const idle = await idleRss(daemon);
    const log = join(dir.path, 'instances', 'srv', 'logs', 'server.log');
    const cutOffs = async () =>
      [...(await readFile(log, 'utf8').catch(() => '')).matchAll(/endless status: cut off after (\d+) bytes/g)].map(
        (m) => Number(m[1]),
      );
    await unharmedWhile(daemon, idle, async () => {
      await writeFile(trigger, '');
      await waitFor(
        'three endless answers cut off',
        async () => ((await cutOffs()).length >= 3 ? true : undefined),
        30_000,
      );
    });
    for (const bytes of await cutOffs()) assert.ok(bytes < CUT_OFF_BELOW, `cut off after ${bytes} bytes`);
    const after = await daemon.status('srv', 'tok');
    assert.equal([after.state, after.pid], ['server.running', running.pid], 'the server runs on, not restarted');
  } finally {
    if (d) await d.stop();
    await dir.cleanup();
  }
});

test("endless :: a hub's endless listing answer is cut off at its cap and shown as the hub's error", async () => {
  const dir = await tempDir('wd-endless-hub-');
  let hub: FakeHub | null = null;
  let d: RunningDaemon | null = null;
  try {
    hub = await startFakeHub();
    const port = await freePort();
    const address = `ss14://127.0.0.1:${port}`;
    await advertiseTo(join(dir.path, 'instances', 'adv'), address, hub.url);
    hub.list(address);
    // A check may take min(10 s, CheckSeconds): 2 s of an unbounded read is gigabytes on loopback.
    const yaml = testConfig({
      instances: [
        {
          key: 'adv',
          port,
          runCommand: join(SERVERS, 'console-echo.mjs'),
          extra: '      Hub: { CheckSeconds: 2, MissingMinutes: 60 }',
        },
      ],
    });
    d = await startDaemon(yaml, { dir: dir.path });
    const daemon = d;
    const running = await waitState(daemon, 'adv', 'tok', 'server.running');
    const hubOf = async () => (await daemon.status('adv', 'tok')).hub?.hubs[0];
    await waitFor(
      'a first answer from the hub',
      async () => ((await hubOf())?.listed === true ? true : undefined),
      20_000,
    );
    const idle = await idleRss(daemon);
    const endless = hub;
    await unharmedWhile(daemon, idle, async () => {
      endless.answerEndless();
      await waitFor('three endless answers cut off', () => (endless.cutOff.length >= 3 ? true : undefined), 30_000);
    });
    for (const bytes of hub.cutOff) assert.ok(bytes < CUT_OFF_BELOW, `cut off after ${bytes} bytes`);
    const seen = await hubOf();
    assert.is(seen?.listed, null, 'not known while the hub answers so');
    assert.match(seen?.lastError ?? '', /answered HTTP 200, but its answer passed 64 kB, the most it may be/);
    assert.is((await daemon.status('adv', 'tok')).pid, running.pid, 'the server runs on');
  } finally {
    if (d) await d.stop();
    await hub?.close();
    await dir.cleanup();
  }
});

test("endless :: a chat webhook's endless answer is cut off at its cap; the message is dropped, saying why", async () => {
  const dir = await tempDir('wd-endless-hook-');
  let hook: WebhookReceiver | null = null;
  let d: RunningDaemon | null = null;
  try {
    hook = await startWebhookReceiver({ endless: true });
    const port = await freePort();
    const yaml = testConfig({
      webhook: hook.url,
      instances: [{ key: 'srv', port, runCommand: join(SERVERS, 'exit-on-file.mjs') }],
    });
    d = await startDaemon(yaml, { dir: dir.path });
    const daemon = d;
    await waitState(daemon, 'srv', 'tok', 'server.running');
    const idle = await idleRss(daemon);
    const endless = hook;
    await unharmedWhile(daemon, idle, async () => {
      // Each hold and release is a chat message.
      for (let i = 0; i < 2; i++) {
        assert.is(await daemon.control('srv', 'tok', 'hold'), 200);
        assert.is(await daemon.control('srv', 'tok', 'release'), 200);
      }
      await waitFor('four endless answers cut off', () => (endless.cutOff.length >= 4 ? true : undefined), 30_000);
    });
    for (const bytes of hook.cutOff) assert.ok(bytes < CUT_OFF_BELOW, `cut off after ${bytes} bytes`);
    assert.match(daemon.log(), /message dropped.*HTTP 200, its answer passed 64 kB, the most it may be/);
  } finally {
    if (d) await d.stop();
    await hook?.close();
    await dir.cleanup();
  }
});

test.run();
