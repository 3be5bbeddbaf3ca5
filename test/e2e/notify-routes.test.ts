import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Embed } from '../../src/notify/payload.ts';
import { testConfig } from '../_support/config.ts';
import { waitState, withDaemons } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { startWebhookReceiver } from '../_support/webhook.ts';

const test = suite('e2e :: notification routes');

test('notify-routes :: two routes with the real daemon: the install goes to one as text, the SIGKILL crash to the other as an embed', async () => {
  const ops = await startWebhookReceiver();
  const players = await startWebhookReceiver();
  try {
    await withDaemons({ prefix: 'wd-routes-' }, async ({ start }) => {
      const d = await start(
        testConfig({
          // Dummy: the first launch installs revision 1 (an update-installed notice); nothing asks for another.
          instances: [{ port: await freePort(), extra: '      UpdateType: Dummy\n      Name: Demo station' }],
          extra: [
            'Notification:',
            '  Format: Embed',
            '  Routes:',
            `    - Webhook: ${ops.url}`,
            '      Events: [crash, hang]',
            '      Instances: [demo]',
            `    - Webhook: ${players.url}`,
            '      Events: [update-installed]',
            '      Format: Text',
          ].join('\n'),
        }),
      );
      const up = await waitState(d, 'demo', 'tok', 'server.running');
      await waitFor('the install notice', () => players.messages.length === 1, 15_000);
      assert.is(players.messages[0]?.content, 'Server `demo` was updated to revision 1.');
      assert.is(ops.messages.length, 0, 'ops wants no updates');

      process.kill(up.pid as number, 'SIGKILL');
      await waitFor('the crash embed', () => ops.messages.length === 1, 15_000);
      const body = ops.messages[0]?.body as { embeds?: Embed[] } | undefined;
      const embed = body?.embeds?.[0] as Embed;
      assert.ok(embed, 'an embed');
      assert.is(embed.title, 'Crashed · Demo station (demo)');
      assert.is(embed.color, 0xe74c3c);
      const fields = Object.fromEntries(embed.fields.map((f) => [f.name, f.value]));
      assert.is(fields.Exit, 'signal SIGKILL');
      assert.is(fields.Revision, '1');
      assert.match(fields.Uptime ?? '', /^\d+ s$/);
      const relaunched = await waitState(d, 'demo', 'tok', 'server.running', { notPid: up.pid });
      assert.is(relaunched.revision, '1', 'the relaunch installed nothing');

      // A marker after it: an update (revision 2), told to players. That route posts in order, so a crash sent
      // there would have come first; ops had its crash embed queued at the crash, long before this install.
      assert.is(await d.control('demo', 'tok', 'update'), 200);
      await waitFor('the second install notice', () => players.messages.length >= 2, 15_000);
      assert.equal(
        players.messages.map((m) => m.content),
        [
          'Server `demo` was updated to revision 1.',
          'Server `demo` was updated to revision 2 (requested with its API token from 127.0.0.1).',
        ],
        'players got no crash',
      );
      assert.is(ops.messages.length, 1, 'ops got the crash once, and no install');
    });
  } finally {
    await ops.close();
    await players.close();
  }
});

test.run();
