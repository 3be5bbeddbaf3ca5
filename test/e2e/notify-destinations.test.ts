import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type ChatService,
  startJsonReceiver,
  startMatrix,
  startNtfy,
  startSlack,
  startTelegram,
} from '../_support/chat-services.ts';
import { testConfig } from '../_support/config.ts';
import { waitState, withDaemons } from '../_support/daemon.ts';
import { freePort, ROOT, waitFor } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import { loopbackCert, startSmtp } from '../_support/smtp.ts';

const test = suite('e2e :: notification destinations');

const SECRETS = {
  ntfyToken: 'tk_e2entfysecret',
  matrixToken: 'syt_e2ematrixsecret',
  telegramToken: '4242:e2etelegramsecret',
  smtpPass: 'e2e-smtp-s3cret',
};

test('notify-destinations :: a crash reaches ntfy, Slack, Matrix, Telegram, SMTP, JSON and a command, each after its 429; no secret logged', async () => {
  await withDaemons({ prefix: 'wd-dest-' }, async ({ dir, start }) => {
    const tls = await loopbackCert();
    await writeFile(join(dir, 'smtp-ca.pem'), tls.cert);
    // Every service rate-limits its first message, with its own retry hint; SMTP defers it (451), the command asks
    // for a retry (exit 75).
    const ntfy = await startNtfy({ token: SECRETS.ntfyToken, limited: 1 });
    const slack = await startSlack({ limited: 1 });
    const matrix = await startMatrix({ token: SECRETS.matrixToken, roomId: '!ops:example.org', limited: 1 });
    const telegram = await startTelegram({ token: SECRETS.telegramToken, chatId: '-100', limited: 1 });
    const json = await startJsonReceiver({ limited: 1 });
    const smtp = await startSmtp({ tls, user: 'alerts', pass: SECRETS.smtpPass, deferFirst: 1 });
    const out = join(dir, 'command.jsonl');
    try {
      const command = [process.execPath, join(ROOT, 'test/fixtures/notice-command.mjs'), out];
      const route = (destination: string) => [`    - { ${destination}, Events: [crash] }`];
      const d = await start(
        testConfig({
          instances: [
            {
              key: 'alpha',
              port: await freePort(),
              runCommand: fixture('exit-on-file.mjs'),
              extra: [
                '      Name: Alpha station',
                '      EnvironmentVariables:',
                `        EXIT_FILE: ${JSON.stringify(join(dir, 'crash-now'))}`,
              ].join('\n'),
            },
          ],
          extra: [
            '  WebhookRetries: 3',
            'Notification:',
            '  Routes:',
            ...route(`Ntfy: "${ntfy.url}", Token: ${SECRETS.ntfyToken}`),
            ...route(`Slack: "${slack.url}"`),
            ...route(
              `Matrix: { Homeserver: "${matrix.url}", RoomId: "!ops:example.org", AccessToken: ${SECRETS.matrixToken} }`,
            ),
            ...route(`Telegram: { BotToken: "${SECRETS.telegramToken}", ChatId: -100, ApiUrl: "${telegram.url}" }`),
            ...route(
              `Email: { Smtp: "smtp://alerts:${SECRETS.smtpPass}@127.0.0.1:${smtp.port}", From: watchdog@example.org, To: ops@example.org }`,
            ),
            ...route(`Json: "${json.url}"`),
            ...route(`Command: ${JSON.stringify([...command, '--tempfail-first', join(dir, 'marker')])}`),
          ].join('\n'),
        }),
        { NODE_EXTRA_CA_CERTS: join(dir, 'smtp-ca.pem') },
      );
      await waitState(d, 'alpha', 'tok', 'server.running');
      await writeFile(join(dir, 'crash-now'), 'crash\n');

      const lines = async () => (await readFile(out, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
      await waitFor(
        'every destination',
        async () =>
          ntfy.received.length &&
          slack.received.length &&
          matrix.received.length &&
          telegram.received.length &&
          json.received.length &&
          smtp.mails.length &&
          (await lines()).length >= 2,
        30_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}\n${d.log().split('\n').slice(-40).join('\n')}`, { cause: err });
      });

      for (const svc of [ntfy, slack, matrix, telegram, json]) {
        assert.is(svc.limitedCount(), 1, 'a 429 first');
        assert.equal(svc.rejected, [], 'every request as the API wants it');
        assert.is(svc.received.length, 1, 'then the message, once');
      }
      const title = 'Crashed · Alpha station (alpha)';
      const ntfyTitle = /^=\?UTF-8\?B\?(.+)\?=$/.exec(String(ntfy.received[0]?.headers.title))?.[1] ?? '';
      assert.is(Buffer.from(ntfyTitle, 'base64').toString('utf8'), title);
      assert.match(ntfy.received[0]?.text ?? '', /^Server `alpha` exited with non-clean exit code 3/);
      const field = (svc: ChatService, name: string) => String(Reflect.get(Object(svc.received[0]?.body), name));
      assert.match(field(slack, 'text'), /^Crashed · Alpha station \(alpha\)\n/);
      assert.match(field(matrix, 'body'), /^Crashed · Alpha station \(alpha\)\n/);
      assert.match(field(telegram, 'text'), /^Crashed · Alpha station \(alpha\)\n/);
      const notice = json.received[0]?.body as { key: string; kind: string; title: string };
      assert.equal([notice.key, notice.kind, notice.title], ['alpha', 'crash', title]);
      assert.is(smtp.deferred(), 1, 'a 451 first');
      assert.ok(smtp.mails[0]?.secure, 'mailed after STARTTLS');
      assert.match(smtp.mails[0]?.raw ?? '', /Server `alpha` exited with non-clean exit code 3/);
      const runs = (await lines()).map((l) => JSON.parse(l) as { notice: Record<string, string> });
      assert.is(runs.length, 2, 'the command ran twice: exit 75, then 0');
      assert.equal([runs[1]?.notice.WATCHDOG_NOTICE_KEY, runs[1]?.notice.WATCHDOG_NOTICE_TITLE], ['alpha', title]);

      const log = d.log();
      const retried = log.split('\n').filter((l) => l.includes('chat webhook: retrying'));
      for (let i = 0; i < 7; i++)
        assert.ok(
          retried.some((l) => l.includes(`Notification.Routes[${i}]`)),
          `route ${i} retried, named by its label`,
        );
      for (const secret of [...Object.values(SECRETS), 'slacksecret', 'jsonsecret', '4242:'])
        assert.not.ok(log.includes(secret), `${secret} in the daemon log`);
    } finally {
      for (const svc of [ntfy, slack, matrix, telegram, json, smtp]) await svc.close();
    }
  });
});

test.run();
