/**
 * Chat notifications (`Notification.DiscordWebhook`) under the real SS14.Watchdog and under ours, side by side,
 * each posting to a loopback webhook of its own: a crash after the first check-in, a hang (SIGSTOP), and a stop.
 * The texts, and the JSON key that turns mentions off, are compared.
 */
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort, tempDir, waitFor } from '../_support/env.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../_support/webhook.ts';
import {
  difference, isRunningPid, killPid, peerAvailable, peerProgram, pidsWith, postAs, SERILOG, startSide, startsIn, writeBehave,
  type RunningSide, type SideName,
} from './_peer.ts';

const KEY = 'n';
const TOKEN = 't';
const TIMEOUT_S = 3;
const CHECK_LOGS = 'Check server logs for possible causes.';

interface Side {
  run: RunningSide;
  dir: string;
  hook: WebhookReceiver;
}

interface Ctx {
  sides: Partial<Record<SideName, Side>>;
  dirs: Array<{ path: string; cleanup: () => Promise<void> }>;
}

const startLog = (side: Side) => join(side.dir, 'starts.log');
const texts = (side: Side) => side.hook.messages.map((m) => m.content);

async function message(side: Side, what: string, re: RegExp): Promise<{ content: string; body: unknown }> {
  try {
    return await waitFor(`${side.run.name}: the ${what} notification`, () => side.hook.messages.find((m) => re.test(m.content)), 20_000, 50);
  } catch (err) {
    throw new Error(`${(err as Error).message}; received: ${JSON.stringify(texts(side))}`, { cause: err });
  }
}

const test = suite<Ctx>('peer :: chat notifications, real vs ours', { sides: {}, dirs: [] });

test.before(async (ctx) => {
  try {
    await peerProgram();
    await Promise.all((['real', 'ours'] as const).map(async (name) => {
      const dir = await tempDir(`wd-peer-notify-${name}-`);
      ctx.dirs.push(dir);
      const hook = await startWebhookReceiver();
      const behave = await writeBehave(dir.path);
      const [urlsPort, apiPort] = [await freePort(), await freePort()];
      // The first launch checks in and crashes; every later launch behaves.
      const env = { FIXTURE_LIFETIME_MS: '60000', START_LOG: join(dir.path, 'starts.log'), MODE: 'crash', MODE_LAUNCHES: '1' };
      const yaml = [
        SERILOG,
        `Urls: http://localhost:${urlsPort}`,
        'Notification:',
        `  DiscordWebhook: ${hook.url}`,
        'Servers:',
        '  Instances:',
        `    ${KEY}:`,
        `      ApiToken: ${TOKEN}`,
        `      ApiPort: ${apiPort}`,
        `      RunCommand: ${JSON.stringify(behave)}`,
        `      TimeoutSeconds: ${TIMEOUT_S}`,
        '      DumpOnTimeout: false',
        `      Arguments: ${JSON.stringify(['--cvar', `net.port=${apiPort}`, '--cvar', 'watchdog.checkin_interval=0.3'])}`,
        `      EnvironmentVariables: ${JSON.stringify(env)}`,
      ].join('\n') + '\n';
      ctx.sides[name] = { run: await startSide(name, dir.path, yaml, urlsPort), dir: dir.path, hook };
    }));
  } catch (err) {
    console.error(err); // uvu reports a failed hook only as a suite that ran nothing
    throw err;
  }
});

test.after(async (ctx) => {
  for (const side of Object.values(ctx.sides)) {
    await side.run.stop();
    await side.hook.close();
  }
  for (const dir of ctx.dirs) {
    for (const pid of await pidsWith(join(dir.path, 'instances', KEY, 'config.toml'))) killPid(pid);
    await dir.cleanup();
  }
});

test('a crash after the first check-in: one notification each, with the exit status', async (ctx) => {
  const real = await message(ctx.sides.real!, 'crash', /exited with non-clean/);
  const ours = await message(ctx.sides.ours!, 'crash', /exited with non-clean/);
  assert.is(real.content, `Server \`${KEY}\` exited with non-clean exit status: ProcessExitStatus { Reason = ExitCode, Status = 1, IsClean = False }. ${CHECK_LOGS}`);
  assert.is(ours.content, `Server \`${KEY}\` exited with non-clean exit code 1. ${CHECK_LOGS}`);
  difference('crash notification: ours says "exit code 1", the real watchdog prints its ProcessExitStatus record');
});

test('the JSON that turns mentions off: the real watchdog writes "allowed-mentions" (which Discord ignores), ours "allowed_mentions"', (ctx) => {
  const real = ctx.sides.real!.hook.messages[0]!.body as Record<string, unknown>;
  const ours = ctx.sides.ours!.hook.messages[0]!.body as Record<string, unknown>;
  assert.equal(real['allowed-mentions'], { parse: [] });
  assert.is(real.allowed_mentions, undefined);
  assert.equal(ours.allowed_mentions, { parse: [] });
  difference('webhook payload: ours sends allowed_mentions (Discord\'s key); the real watchdog\'s kebab-case serializer sends allowed-mentions, so its mentions are not suppressed');
});

test('a hang (SIGSTOP): the server is killed and a notification says so', async (ctx) => {
  for (const name of ['real', 'ours'] as const) {
    const side = ctx.sides[name]!;
    const starts = await waitFor(`${name}: the second launch`, async () => {
      const s = await startsIn(startLog(side));
      return s.length >= 2 ? s : undefined;
    }, 20_000, 50);
    const pid = starts[1]![1];
    await waitFor(`${name}: the second server running`, () => isRunningPid(pid), 10_000, 50);
    await new Promise((r) => setTimeout(r, 1000)); // a few check-ins (every 0.3 s)
    process.kill(pid, 'SIGSTOP');
  }
  const real = await message(ctx.sides.real!, 'hang', /timed/);
  const ours = await message(ctx.sides.ours!, 'hang', /timed/);
  assert.is(real.content, `Server \`${KEY}\` timed and will be killed. ${CHECK_LOGS}`);
  assert.is(ours.content, `Server \`${KEY}\` timed out and will be killed. ${CHECK_LOGS}`);
  difference('hang notification: "timed out and will be killed" (ours) vs "timed and will be killed" (real)');
});

test('stop: "has exited after manual stop request" from both', async (ctx) => {
  for (const name of ['real', 'ours'] as const) {
    const side = ctx.sides[name]!;
    await waitFor(`${name}: the third launch`, async () => (await startsIn(startLog(side))).length >= 3, 20_000, 50);
    await new Promise((r) => setTimeout(r, 1000));
    assert.is(await postAs(`${side.run.url}/instances/${KEY}/stop`, KEY, TOKEN), 200);
  }
  for (const name of ['real', 'ours'] as const) {
    const m = await message(ctx.sides[name]!, 'stop', /manual stop/);
    assert.is(m.content, `Server \`${KEY}\` has exited after manual stop request.`, name);
  }
  for (const name of ['real', 'ours'] as const) console.log(`peer: notifications, ${name}: ${JSON.stringify(texts(ctx.sides[name]!))}`);
});

test('after the hang kill the real watchdog also reports the killed server\'s exit; ours reports the hang once', (ctx) => {
  const real = texts(ctx.sides.real!);
  const ours = texts(ctx.sides.ours!);
  assert.ok(real.includes(`Server \`${KEY}\` exited with non-clean exit status: ProcessExitStatus { Reason = ExitCode, Status = 137, IsClean = False }. ${CHECK_LOGS}`), 'real: the SIGKILL exit too');
  assert.is(ours.filter((t) => /exited with/.test(t)).length, 1, 'ours: only the crash, not the kill it made itself');
  assert.is(ours.length, 3, 'ours: crash, hang, stop');
  difference('after a hang kill: the real watchdog sends a second notification for the exit it caused (status 137); ours sends only the hang one');
});

if (peerAvailable) test.run();
