import * as assert from 'uvu/assert';
import { NOTICE_KINDS } from '../../src/bus.ts';
import { loadConfig } from '../../src/config/load.ts';
import { routesFrom, targetIdentity } from '../../src/notify/routes.ts';
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
    routes.map((x) => [
      x.label,
      targetIdentity(x.target),
      [...x.events].join(','),
      x.instances && [...x.instances],
      x.format,
    ]),
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
  const hidden = 'got a value not shown here (it holds a token or password)';
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

test('notification :: each destination loads into its target; secrets never shown in a problem', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml(instances, {
      top: [
        'Notification:',
        '  Routes:',
        '    - { Ntfy: "https://ntfy.example/alerts", Events: [crash] }',
        '    - { Slack: "https://hooks.slack.example/services/T/B/x", Events: [crash] }',
        '    - Matrix: { Homeserver: "https://matrix.example", RoomId: "!r:matrix.example" }',
        '      Events: [crash]',
        '    - { Telegram: { BotToken: "1:abc", ChatId: -100 }, Events: [crash] }',
        '    - Email: { Smtp: "smtp://u:p@mail.example:587", From: w@example.org, To: o@example.org }',
        '      Events: [crash]',
        '    - { Json: "https://ops.example/notices", Events: [crash] }',
        '    - { Command: [/usr/local/bin/page, --urgent], Events: [crash] }',
      ],
    }),
  });
  // Secrets from the environment, one key each, beside the file's other keys.
  const r = await loadConfig({
    cwd: dir,
    env: { Notification__Routes__2__Matrix__AccessToken: 'syt_1', Notification__Routes__0__Token: 'tk_1' },
  });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  assert.equal(
    routesFrom(r.config.settings.Notification).map((x) => x.target),
    [
      { type: 'Ntfy', url: 'https://ntfy.example/alerts', token: 'tk_1' },
      { type: 'Slack', url: 'https://hooks.slack.example/services/T/B/x' },
      { type: 'Matrix', Homeserver: 'https://matrix.example', RoomId: '!r:matrix.example', AccessToken: 'syt_1' },
      { type: 'Telegram', BotToken: '1:abc', ChatId: '-100', ApiUrl: 'https://api.telegram.org' },
      { type: 'Email', Smtp: 'smtp://u:p@mail.example:587', From: 'w@example.org', To: ['o@example.org'] },
      { type: 'Json', url: 'https://ops.example/notices' },
      { type: 'Command', argv: ['/usr/local/bin/page', '--urgent'] },
    ],
  );
});

test('notification :: a route with no destination, or two, or a Token without Ntfy, is a problem at its path', async ({
  dir,
}) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml(instances, {
      top: [
        'Notification:',
        '  Routes:',
        '    - { Events: [crash] }',
        '    - { Slack: "https://hooks.example/s3cr3t", Json: "https://ops.example/s3cr3t", Events: [crash] }',
        '    - { Webhook: "https://chat.example/hooks/s3cr3t", Token: s3cr3t, Events: [crash] }',
        '    - { Ntfy: "ntfy.example/s3cr3t", Events: [crash] }',
        '    - Telegram: { BotToken: "", ChatId: 1 }',
        '      Events: [crash]',
        '    - Email: { Smtp: "http://u:s3cr3t@mail.example", From: w@example.org, To: [] }',
        '      Events: [crash]',
        '    - { Command: [], Events: [crash] }',
        '    - { Email: "smtp://u:s3cr3t@mail.example", Events: [crash] }',
        '    - { Slack: "https://hooks.example/s3cr3t", Format: Embed, Events: [crash] }',
      ],
    }),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  const problems = r.ok ? [] : r.problems;
  const f = 'appsettings.yml: Notification.Routes';
  const one =
    'expected exactly one destination: Webhook, Ntfy, Slack, Matrix, Telegram, Email, Json, Command, got a map';
  const hidden = 'got a value not shown here (it holds a token or password)';
  assert.equal(
    [...problems].sort(),
    [
      `${f}[0]: ${one}`,
      `${f}[1]: ${one}`,
      `${f}[2]: expected Token only beside Ntfy, got a map`,
      `${f}[3].Ntfy: expected an ntfy topic URL (http or https), ${hidden}`,
      `${f}[4].Telegram.BotToken: expected the bot's token (from @BotFather), ${hidden}`,
      `${f}[5].Email.Smtp: expected an SMTP URL (smtp://user:password@host:587 or smtps://…), ${hidden}`,
      `${f}[5].Email.To: expected a recipient address or a list of them, got a list`,
      `${f}[6].Command: expected a list: the program, then its arguments, got a list`,
      `${f}[7].Email: expected a map with Smtp, From and To, ${hidden}`,
      `${f}[8]: expected Format only beside Webhook, got a map`,
    ].sort(),
  );
  assert.not.match(problems.join('\n'), /s3cr3t/);
});

test.run();
