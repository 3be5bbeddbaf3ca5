/**
 * The hub watch through the real daemon: a console-echo server whose config.toml advertises to a strict fake hub on
 * loopback. Listed, then dropped from the hub: the daemon sends the engine's re-advertise command through the
 * console first, then tells chat once; listed again, chat hears that too.
 */
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runMain } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../_support/daemon.ts';
import { freePort, ROOT, tempDir, waitFor } from '../_support/env.ts';
import { advertiseTo, type FakeHub, startFakeHub } from '../_support/fake-hub.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../_support/webhook.ts';

const test = suite('e2e :: hub watch');
const ECHO = join(ROOT, 'test/fixtures/servers/console-echo.mjs');

test('hub watch :: dropped from the hub: re-advertise through the console, then one notice; listed again: one more', async () => {
  const dir = await tempDir('wd-hub-');
  let hub: FakeHub | null = null;
  let chat: WebhookReceiver | null = null;
  let d: RunningDaemon | null = null;
  try {
    hub = await startFakeHub();
    chat = await startWebhookReceiver();
    const port = await freePort();
    const address = `ss14://127.0.0.1:${port}`;
    await advertiseTo(join(dir.path, 'instances', 'adv'), address, hub.url);
    hub.list(address);
    const yaml = testConfig({
      webhook: chat.url,
      instances: [
        {
          key: 'adv',
          port,
          runCommand: ECHO,
          extra: ['      Console: true', '      Hub: { CheckSeconds: 0.2, MissingMinutes: 0.01 }'].join('\n'),
        },
      ],
    });
    d = await startDaemon(yaml, { dir: dir.path });
    const daemon = d;
    const checks = () => (hub as FakeHub).requests.filter((r) => r.path === '/api/servers/info').length;
    await waitFor('the daemon asking the hub', () => (checks() >= 2 ? true : undefined), 15_000);
    const hubNotices = () => (chat as WebhookReceiver).messages.filter((m) => m.content.includes('listed by'));
    assert.equal(hubNotices(), [], 'listed: nothing to tell');
    // Seen where operators look: the status, `watchdog status`, and /metrics.
    const hubOf = async () => (await daemon.status('adv', 'tok')).hub;
    const listed = await waitFor(
      'the status to say listed',
      async () => {
        const h = await hubOf();
        return h?.hubs[0]?.listed === true ? h : undefined;
      },
      10_000,
    );
    assert.is(listed.address, address);
    assert.is(listed.hubs[0]?.hub, hub.url);
    assert.ok(listed.hubs[0]?.checkedAt, 'the time of the last answer');
    const table = await runMain(['status', 'adv', '--url', daemon.url, '--token', 'tok'], { cwd: ROOT });
    assert.match(table.stdout, new RegExp(`adv hub: listed by ${hub.url}`));
    const metric = async () =>
      (await (await fetch(`${daemon.url}/metrics`)).text()).match(/^watchdog_instance_hub_listed\{[^}]*\} (\d)$/m)?.[1];
    assert.is(await metric(), '1');

    hub.drop(address);
    await waitFor(
      'the re-advertise command',
      () => (daemon.log().includes('console: hub_advertise_now') ? true : undefined),
      15_000,
    );
    const missing = await waitFor('one hub notice', () => hubNotices()[0], 15_000);
    const gone = await hubOf();
    assert.is(gone?.hubs[0]?.listed, false, 'the status says missing');
    assert.ok(gone?.hubs[0]?.missingSince, 'since when');
    assert.is(await metric(), '0');
    assert.match(
      await (await fetch(`${daemon.url}/metrics`)).text(),
      /^watchdog_instance_hub_missing_seconds\{instance="adv",hub="[^"]+"\} \d/m,
    );
    assert.match(missing.content, new RegExp(`Server \`adv\` \\(${address}\\) has not been listed by ${hub.url}`));
    // Several more checks find it missing; then it is listed again, and that notice is the marker after them: the
    // webhook posts in order, so a second missing notice would have come before it.
    const seen = checks();
    await waitFor('five more hub checks while missing', () => (checks() >= seen + 5 ? true : undefined), 15_000);
    hub.list(address);
    const back = await waitFor('listed again', () => hubNotices()[1], 15_000);
    assert.match(back.content, /Server `adv` is listed by .* again/);
    assert.is(hubNotices().length, 2, 'told once while it stayed missing, once listed again');
    assert.is(hubNotices()[0], missing);
  } finally {
    if (d) await d.stop();
    await hub?.close();
    await chat?.close();
    await dir.cleanup();
  }
});

test.run();
