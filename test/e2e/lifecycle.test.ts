import { readFile } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../_support/config.ts';
import { basic, startDaemon, type RunningDaemon } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../_support/webhook.ts';

interface Ctx { daemon?: RunningDaemon; hook?: WebhookReceiver }
const test = suite<Ctx>('e2e :: lifecycle with the demo server', {});

test.before(async (ctx) => {
  try {
    ctx.hook = await startWebhookReceiver();
    const port = await freePort();
    ctx.daemon = await startDaemon(testConfig({ webhook: ctx.hook.url, instances: [{ port, timeoutSeconds: 3 }] }));
  } catch (err) {
    console.error(err);
    throw err;
  }
});
test.after(async (ctx) => {
  await ctx.daemon?.stop();
  await ctx.daemon?.cleanup();
  await ctx.hook?.close();
});

const token = 'tok';
const running = (d: RunningDaemon) => waitFor('running', async () => {
  const s = await d.status('demo', token);
  return s.state === 'running' && s.pid !== null ? s : undefined;
}, 15_000);

/** The secret a server got, read from its environment (root can read /proc/<pid>/environ). */
async function secretOf(pid: number): Promise<string> {
  const env = await readFile(`/proc/${pid}/environ`, 'utf8');
  const entry = env.split('\0').find((e) => e.startsWith('ROBUST_CVAR_watchdog__token='));
  if (!entry) throw new Error('no token in the server environment');
  return entry.slice('ROBUST_CVAR_watchdog__token='.length);
}

const ping = (d: RunningDaemon, secret: string) =>
  fetch(`${d.url}/server_api/demo/ping`, { method: 'POST', headers: { authorization: basic('demo', secret) } }).then((r) => r.status);

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };

test('reaches running; status reports state, pid, revision and last check-in', async ({ daemon }) => {
  const d = daemon!;
  const s = await running(d);
  assert.type(s.pid, 'number');
  assert.ok('revision' in s, 'revision key present');
  assert.ok(s.lastCheckinAt && !Number.isNaN(Date.parse(s.lastCheckinAt)), 'lastCheckinAt is a timestamp');
  assert.is(s.startupFailures, 0);
});

test('restart: the server gets /shutdown, comes back with a new pid and secret; the old secret is refused', async ({ daemon }) => {
  const d = daemon!;
  const before = await running(d);
  const oldSecret = await secretOf(before.pid!);
  assert.is(await ping(d, oldSecret), 200);
  assert.is(await d.control('demo', token, 'restart'), 200);
  const after = await waitFor('a new pid', async () => {
    const s = await d.status('demo', token);
    return s.state === 'running' && s.pid !== before.pid ? s : undefined;
  }, 15_000);
  assert.not.ok(alive(before.pid!), 'old server gone');
  assert.match(d.log(), /Restart requested/);
  const newSecret = await secretOf(after.pid!);
  assert.is.not(newSecret, oldSecret);
  assert.is(await ping(d, oldSecret), 401);
  assert.is(await ping(d, newSecret), 200);
});

test('stop: the server gets /update, exits, is not relaunched, the webhook says so; restart brings it back', async ({ daemon, hook }) => {
  const d = daemon!;
  const before = await running(d);
  const sent = hook!.messages.length;
  const from = d.log().length;
  assert.is(await d.control('demo', token, 'stop'), 200);
  await waitFor('stopped.idle', async () => (await d.status('demo', token)).state === 'stopped.idle', 15_000);
  assert.not.ok(alive(before.pid!), 'server exited');
  // It left because it was asked to by POST /update (the demo server's own line, echoed by the daemon), not killed.
  assert.match(d.log().slice(from), /update received \(UpdateAvailable\)/);
  assert.not.match(d.log().slice(from), /shutdown requested|SIGKILL/);
  await waitFor('stop notification', () => hook!.messages.slice(sent).some((m) => /`demo`.*manual stop/.test(m.content)));
  await new Promise((r) => setTimeout(r, 800));
  assert.is((await d.status('demo', token)).state, 'stopped.idle', 'still stopped');
  assert.is(await d.control('demo', token, 'restart'), 200);
  const back = await running(d);
  assert.is.not(back.pid, before.pid);
});

test('SIGKILL of the server: relaunched, and the webhook names the signal', async ({ daemon, hook }) => {
  const d = daemon!;
  const before = await running(d);
  const sent = hook!.messages.length;
  process.kill(before.pid!, 'SIGKILL');
  await waitFor('relaunch', async () => {
    const s = await d.status('demo', token);
    return s.state === 'running' && s.pid !== before.pid;
  }, 15_000);
  await waitFor('crash notification', () => hook!.messages.slice(sent).some((m) => /`demo`/.test(m.content) && /SIGKILL/.test(m.content)));
});

test('SIGSTOP of the server: killed after TimeoutSeconds, relaunched, webhook', async ({ daemon, hook }) => {
  const d = daemon!;
  const before = await running(d);
  const sent = hook!.messages.length;
  process.kill(before.pid!, 'SIGSTOP');
  const t0 = Date.now();
  await waitFor('hang kill and relaunch', async () => {
    const s = await d.status('demo', token);
    return s.state === 'running' && s.pid !== before.pid;
  }, 20_000);
  assert.ok(Date.now() - t0 >= 1500, 'not killed before the timeout');
  assert.not.ok(alive(before.pid!), 'frozen server killed');
  await waitFor('hang notification', () => hook!.messages.slice(sent).some((m) => /`demo`.*timed out/.test(m.content)));
});

test.run();
