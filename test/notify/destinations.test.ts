import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Bus, createBus, NOTICE_KINDS } from '../../src/bus.ts';
import { createNotifier } from '../../src/notify/notifier.ts';
import type { Route, Target } from '../../src/notify/routes.ts';
import {
  type ChatService,
  startJsonReceiver,
  startMatrix,
  startNtfy,
  startSlack,
  startTelegram,
} from '../_support/chat-services.ts';
import { ROOT, tempDir, waitFor } from '../_support/env.ts';
import { captureLog } from '../_support/recording-logger.ts';
import { loopbackCert, startSmtp } from '../_support/smtp.ts';

const test = suite('notify :: destinations');

const NAME = 'Zoë’s server';
const crash = (bus: Bus) =>
  bus.emit('instance:alert', {
    key: 'alpha',
    kind: 'crash',
    message: 'Server `alpha` exited with code 3.',
    exit: { code: 3, signal: null },
    at: Date.parse('2026-01-02T03:04:05Z'),
  });

/** A notifier with one route to `target` (every kind); `run` gets the bus and the log, and it is stopped after. */
async function withRoute(
  target: Target,
  run: (bus: Bus, log: ReturnType<typeof captureLog>) => Promise<void>,
  over: { retries?: number; timeoutMs?: number; ca?: string } = {},
) {
  const route: Route = {
    label: 'Notification.Routes[0]',
    target,
    events: new Set(NOTICE_KINDS),
    instances: null,
    format: 'Text',
  };
  const bus = createBus();
  const log = captureLog();
  const n = createNotifier({
    routes: [route],
    bus,
    log,
    nameOf: () => NAME,
    retries: over.retries ?? 2,
    retryBaseMs: 20,
    timeoutMs: over.timeoutMs ?? 10_000,
    maxAnswerBytes: 64_000,
    ...(over.ca ? { ca: over.ca } : {}),
  });
  try {
    await run(bus, log);
  } finally {
    await n.stop();
  }
}

/** The service took exactly one message after one 429, waited for as long as it asked (`delayMs`). */
async function deliveredAfterLimit(svc: ChatService, log: ReturnType<typeof captureLog>, delayMs: number) {
  await waitFor('the message, after the 429', () => svc.received.length === 1);
  assert.is(svc.limitedCount(), 1);
  assert.equal(svc.rejected, [], 'every request as the API wants it');
  const retry = log.lines.find((l) => l.startsWith('debug chat webhook: retrying'));
  assert.match(retry ?? '', new RegExp(`"route":"Notification\\.Routes\\[0\\]".*"delayMs":${delayMs}\\b`));
}

const noSecret = (log: ReturnType<typeof captureLog>, ...secrets: string[]) => {
  for (const s of secrets) assert.not.ok(log.lines.join('\n').includes(s), `${s} in the log`);
};

test('ntfy :: the text with Title, Priority and Tags, a bearer token, the title RFC 2047-encoded; Retry-After', async () => {
  const svc = await startNtfy({ token: 'tk_ntfysecret', limited: 1 });
  try {
    await withRoute({ type: 'Ntfy', url: svc.url, token: 'tk_ntfysecret' }, async (bus, log) => {
      crash(bus);
      await deliveredAfterLimit(svc, log, 1000);
      const got = svc.received[0];
      if (!got) throw new Error('nothing received');
      const { headers, text } = got;
      const encoded = /^=\?UTF-8\?B\?(.+)\?=$/.exec(String(headers.title));
      assert.is(Buffer.from(encoded?.[1] ?? '', 'base64').toString('utf8'), `Crashed · ${NAME} (alpha)`);
      assert.is(headers.priority, '4', 'a crash is high priority');
      assert.is(headers.tags, 'warning,crash');
      assert.match(text, /^Server `alpha` exited with code 3\.\n\nInstance: Zoë’s server \(alpha\)\nExit: exit code 3/);
      noSecret(log, svc.url, 'tk_ntfysecret');
    });
  } finally {
    await svc.close();
  }
});

test('slack :: {text, blocks} with the title, message and fields; Retry-After', async () => {
  const svc = await startSlack({ limited: 1 });
  try {
    await withRoute({ type: 'Slack', url: svc.url }, async (bus, log) => {
      crash(bus);
      await deliveredAfterLimit(svc, log, 1000);
      const body = svc.received[0]?.body as {
        text: string;
        blocks: Array<{ text?: { text: string }; fields?: unknown[] }>;
      };
      assert.match(body.text, /^Crashed · Zoë’s server \(alpha\)\nServer `alpha` exited with code 3\./);
      assert.is(body.blocks[0]?.text?.text, `*Crashed · ${NAME} (alpha)*\nServer \`alpha\` exited with code 3.`);
      assert.equal(body.blocks[1]?.fields?.[0], { type: 'mrkdwn', text: `*Instance*\n${NAME} (alpha)` });
      noSecret(log, svc.url, 'slacksecret');
    });
  } finally {
    await svc.close();
  }
});

test('matrix :: PUT m.room.message with a bearer token; M_LIMIT_EXCEEDED waited out with the same txn id', async () => {
  const token = 'syt_matrixsecret';
  const svc = await startMatrix({ token, roomId: '!room:example.org', limited: 1, retryAfterMs: 700 });
  try {
    const target: Target = { type: 'Matrix', Homeserver: svc.url, RoomId: '!room:example.org', AccessToken: token };
    await withRoute(target, async (bus, log) => {
      crash(bus);
      await deliveredAfterLimit(svc, log, 700);
      assert.is(svc.paths.length, 2);
      assert.is(svc.paths[1], svc.paths[0], 'the retry is the same transaction');
      const body = svc.received[0]?.body as Record<string, string>;
      assert.is(body.msgtype, 'm.text');
      assert.match(body.body ?? '', /^Crashed · Zoë’s server \(alpha\)\nServer `alpha` exited with code 3\./);
      assert.match(body.formatted_body ?? '', /^<strong>Crashed · Zoë’s server \(alpha\)<\/strong><br>/);
      crash(bus);
      await waitFor('the second notice', () => svc.received.length === 2);
      const txn = (i: number) => svc.received[i]?.path.split('/').at(-1);
      assert.is.not(txn(0), txn(1), 'a new notice is a new transaction');
      noSecret(log, token);
    });
  } finally {
    await svc.close();
  }
});

test('telegram :: POST /bot<token>/sendMessage {chat_id, text}; parameters.retry_after waited out', async () => {
  const token = '123456:telegramsecret';
  const svc = await startTelegram({ token, chatId: '-1001', limited: 1 });
  try {
    await withRoute({ type: 'Telegram', BotToken: token, ChatId: '-1001', ApiUrl: svc.url }, async (bus, log) => {
      crash(bus);
      await deliveredAfterLimit(svc, log, 1000);
      const body = svc.received[0]?.body as { chat_id: string; text: string };
      assert.match(body.text, /^Crashed · Zoë’s server \(alpha\)\nServer `alpha` exited with code 3\./);
      noSecret(log, token, 'telegramsecret');
    });
  } finally {
    await svc.close();
  }
});

test('telegram :: a wrong chat (400) is dropped after one attempt, saying why without the token', async () => {
  const token = '123456:telegramsecret';
  const svc = await startTelegram({ token, chatId: '-1001' });
  try {
    await withRoute({ type: 'Telegram', BotToken: token, ChatId: '-999', ApiUrl: svc.url }, async (bus, log) => {
      crash(bus);
      const dropped = await waitFor('dropped', () => log.lines.find((l) => l.includes('message dropped')));
      assert.match(
        dropped,
        /"route":"Notification\.Routes\[0\]","destination":"Telegram","problem":"HTTP 400","attempts":1/,
      );
      assert.equal(svc.rejected, ['Bad Request: chat not found']);
      noSecret(log, token);
    });
  } finally {
    await svc.close();
  }
});

test('json :: the notice itself {key, kind, title, message, fields, at}; Retry-After', async () => {
  const svc = await startJsonReceiver({ limited: 1 });
  try {
    await withRoute({ type: 'Json', url: svc.url }, async (bus, log) => {
      crash(bus);
      await deliveredAfterLimit(svc, log, 1000);
      assert.equal(svc.received[0]?.body, {
        key: 'alpha',
        kind: 'crash',
        title: `Crashed · ${NAME} (alpha)`,
        message: 'Server `alpha` exited with code 3.',
        fields: [
          { name: 'Instance', value: `${NAME} (alpha)` },
          { name: 'Exit', value: 'exit code 3' },
          { name: 'Reason', value: 'exited on its own' },
        ],
        at: '2026-01-02T03:04:05.000Z',
      });
      noSecret(log, 'jsonsecret');
    });
  } finally {
    await svc.close();
  }
});

test('email :: STARTTLS, login, one mail; a 451 is tried again, a 550 dropped at once', async () => {
  const dir = await tempDir();
  const tls = await loopbackCert();
  const smtp = await startSmtp({ tls, user: 'alerts', pass: 'p@ss/word', deferFirst: 1, refuse: 'nobody@example.org' });
  const Smtp = `smtp://alerts:${encodeURIComponent('p@ss/word')}@127.0.0.1:${smtp.port}`;
  try {
    const target: Target = { type: 'Email', Smtp, From: 'watchdog@example.org', To: ['ops@example.org'] };
    await withRoute(
      target,
      async (bus, log) => {
        crash(bus);
        await waitFor('the mail, after the 451', () => smtp.mails.length === 1);
        assert.is(smtp.deferred(), 1);
        const mail = smtp.mails[0];
        assert.ok(mail?.secure, 'sent after STARTTLS');
        assert.is(mail?.user, 'alerts');
        assert.equal([mail?.from, mail?.to], ['watchdog@example.org', ['ops@example.org']]);
        assert.match(mail?.raw ?? '', /^Subject: =\?UTF-8\?Q\?Crashed_/m, 'the title as the subject');
        assert.match(mail?.raw ?? '', /Server `alpha` exited with code 3\./);
        noSecret(log, 'p@ss/word', encodeURIComponent('p@ss/word'));
      },
      { ca: tls.cert },
    );
    await withRoute(
      { ...target, To: ['nobody@example.org'] },
      async (bus, log) => {
        crash(bus);
        const dropped = await waitFor('dropped', () => log.lines.find((l) => l.includes('message dropped')));
        assert.match(dropped, /"problem":"SMTP 550","attempts":1/);
      },
      { ca: tls.cert },
    );
  } finally {
    await smtp.close();
    await dir.cleanup();
  }
});

const COMMAND = join(ROOT, 'test/fixtures/notice-command.mjs');

test('command :: no shell, the notice in WATCHDOG_NOTICE_* and on stdin, no daemon secrets; 75 is tried again', async () => {
  const dir = await tempDir();
  const out = join(dir.path, 'out.jsonl');
  process.env.WATCHDOG_TEST_SECRET = 'daemon-env-secret';
  try {
    const argv = [process.execPath, COMMAND, out, '--tempfail-first', join(dir.path, 'marker')];
    await withRoute({ type: 'Command', argv }, async (bus, log) => {
      crash(bus);
      const runs = await waitFor('two runs', async () => {
        const lines = (await readFile(out, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
        return lines.length === 2 && log.lines.some((l) => l.includes('retrying')) ? lines : null;
      });
      const run = JSON.parse(runs[1] ?? '{}') as { notice: Record<string, string>; envNames: string[]; stdin: string };
      assert.equal(run.notice, {
        WATCHDOG_NOTICE_KEY: 'alpha',
        WATCHDOG_NOTICE_NAME: NAME,
        WATCHDOG_NOTICE_KIND: 'crash',
        WATCHDOG_NOTICE_TITLE: `Crashed · ${NAME} (alpha)`,
        WATCHDOG_NOTICE_MESSAGE: 'Server `alpha` exited with code 3.',
        WATCHDOG_NOTICE_AT: '2026-01-02T03:04:05.000Z',
        WATCHDOG_NOTICE_FIELDS: `Instance: ${NAME} (alpha)\nExit: exit code 3\nReason: exited on its own`,
      });
      assert.not.ok(run.envNames.includes('WATCHDOG_TEST_SECRET'), "the daemon's environment is not passed on");
      assert.is((JSON.parse(run.stdin) as { kind: string }).kind, 'crash');
      assert.match(log.lines.find((l) => l.includes('retrying')) ?? '', /exit code 75: busy, try later/);
    });
  } finally {
    delete process.env.WATCHDOG_TEST_SECRET;
    await dir.cleanup();
  }
});

test('command :: a timeout kills its whole process group', async () => {
  const dir = await tempDir();
  const pids = join(dir.path, 'pids');
  try {
    // A shell (quick to start, so the timeout is not spent starting) that leaves a child in its group and waits.
    const argv = ['/bin/sh', '-c', 'sleep 60 & echo "$$ $!" > "$0"; wait', pids];
    await withRoute(
      { type: 'Command', argv },
      async (bus, log) => {
        crash(bus);
        const dropped = await waitFor('timed out', () => log.lines.find((l) => l.includes('message dropped')));
        assert.match(dropped, /timed out after 2000 ms/);
        const both = (await readFile(pids, 'utf8')).trim().split(' ').map(Number);
        assert.is(both.length, 2);
        const alive = (pid: number) => {
          try {
            process.kill(pid, 0);
            return true;
          } catch {
            return false;
          }
        };
        await waitFor('the command and its child gone', () => both.every((p) => !alive(p)));
      },
      { retries: 0, timeoutMs: 2000 },
    );
  } finally {
    await dir.cleanup();
  }
});

test.run();
