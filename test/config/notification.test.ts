import * as assert from 'uvu/assert';
import { NOTICE_KINDS } from '../../src/bus.ts';
import { loadConfig } from '../../src/config/load.ts';
import { routesFrom } from '../../src/notify/routes.ts';
import { tempSuite } from '../_support/env.ts';
import { serversYaml, writeFiles } from './_support/files.ts';

const test = tempSuite('config :: Notification', { prefix: 'wd-notify-config-' });
const instances = { alpha: ['ApiPort: 1212'], beta: ['ApiPort: 1213'] };

test('notification :: Format and Routes load, names and choices in any case; ChatWebhook stays the route for all', async ({
  dir,
}) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml(instances, {
      top: [
        'Notification:',
        '  DiscordWebhook: https://chat.example/hooks/all',
        '  format: embed',
        '  Routes:',
        '    - Webhook: https://chat.example/hooks/ops',
        '      Events: [Crash, hang, LOOP]',
        '      Instances: [alpha]',
        '      Format: Text',
      ],
    }),
  });
  const r = await loadConfig({
    cwd: dir,
    env: {
      Notification__Routes__1__Webhook: 'https://chat.example/hooks/maint',
      Notification__Routes__1__Events__0: 'scheduled-restart',
      Notification__Routes__1__Events__1: 'hold',
    },
  });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  const routes = routesFrom(r.config.settings.Notification);
  assert.equal(
    routes.map((x) => [x.label, x.url, [...x.events].join(','), x.instances && [...x.instances], x.format]),
    [
      ['Notification.ChatWebhook', 'https://chat.example/hooks/all', NOTICE_KINDS.join(','), null, 'Embed'],
      ['Notification.Routes[0]', 'https://chat.example/hooks/ops', 'crash,hang,loop', ['alpha'], 'Text'],
      ['Notification.Routes[1]', 'https://chat.example/hooks/maint', 'scheduled-restart,hold', null, 'Embed'],
    ],
  );
});

test('notification :: every problem at once, with its key path, and no webhook URL in any line', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml(instances, {
      top: [
        'Notification:',
        '  ChatWebhook: discord.com/api/webhooks/1/s3cr3t',
        '  Format: Fancy',
        '  Routes:',
        '    - Webhook: ftp://chat.example/hooks/s3cr3t',
        '      Events: [crash, explode]',
        '    - Webhook: https://chat.example/hooks/b',
        '      Instances: [alpha, gamma]',
        '    - Webhook: https://chat.example/hooks/c',
        '      Events: []',
        '      Event: [hold]',
      ],
    }),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.not.ok(r.ok);
  const problems = r.ok ? [] : r.problems;
  const f = 'appsettings.yml: Notification';
  const hidden = 'got a value not shown here (a webhook URL holds its token)';
  const kinds = NOTICE_KINDS.join(', ');
  assert.equal(
    [...problems].sort(),
    [
      `${f}.ChatWebhook: expected a webhook URL (http or https), ${hidden}`,
      `${f}.Format: expected Text or Embed, got "Fancy"`,
      `${f}.Routes[0].Webhook: expected a webhook URL (http or https), ${hidden}`,
      `${f}.Routes[0].Events[1]: expected one of ${kinds}, got "explode"`,
      `${f}.Routes[1].Events: expected a list of event kinds (${kinds}), got nothing`,
      `${f}.Routes[1].Instances[1]: expected an instance id from Servers.Instances (alpha, beta), got "gamma"`,
      `${f}.Routes[2].Events: expected at least one event kind (${kinds}), got a list`,
      `${f}.Routes[2].Event: unknown key (did you mean Events?)`,
    ].sort(),
  );
  assert.not.match(problems.join('\n'), /s3cr3t/);
});

test.run();
