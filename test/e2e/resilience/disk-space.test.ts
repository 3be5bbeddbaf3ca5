import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon, stopThenRelease } from '../../_support/daemon.ts';
import { freePort, ROOT, tempDir, waitFor } from '../../_support/env.ts';
import { fixture, writeServerScript } from '../../_support/fixtures.ts';
import { metricValue } from '../../_support/metric-value.ts';
import { mountSmallFs, type SmallFs, tmpfsUnavailable } from '../../_support/tmpfs.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../_support/webhook.ts';
import { chatFlushed } from './_support/chat-marker.ts';
import { logLines, running, statusOf, waitStatus } from './_support/daemon-crash.ts';

/**
 * Disk space as a condition: the real daemon with its instance root on a small tmpfs, a quiet server
 * running there, and a loopback chat webhook. Filling the disk makes /health (still 200), /metrics, the status JSON,
 * `watchdog status` and the dashboard say so, and exactly one chat message arrive; freeing it, one more.
 */

const MB = 1_000_000;
const unavailable = tmpfsUnavailable();
if (unavailable) console.log(`skipping the disk-space e2e test: ${unavailable}`);

interface Ctx {
  fs: SmallFs | null;
  hook: WebhookReceiver | null;
  daemon: RunningDaemon | null;
  cleanup: (() => Promise<void>) | null;
}

const s = suite<Ctx>('e2e :: disk space low and back', { fs: null, hook: null, daemon: null, cleanup: null });
const test = unavailable ? s.skip : s;

s.after((ctx) =>
  stopThenRelease(ctx.daemon, [() => ctx.fs?.unmount(), () => ctx.hook?.close(), () => ctx.cleanup?.()]),
);

const diskMessages = (hook: WebhookReceiver) => hook.messages.filter((m) => m.content.startsWith('Disk space'));

interface Health {
  status: string;
  problems?: string[];
  disk?: Array<{ holds: string; low: boolean; message: string }>;
}

async function health(d: RunningDaemon): Promise<{ code: number; body: Health }> {
  const res = await fetch(`${d.url}/health`, { signal: AbortSignal.timeout(5000) });
  return { code: res.status, body: (await res.json()) as Health };
}

/** `watchdog status demo` against the daemon, as a person would run it. */
function cliStatus(d: RunningDaemon): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [join(ROOT, 'bin/watchdog'), 'status', 'demo', '--url', d.url], {
      env: { ...process.env, WATCHDOG_TOKEN: 'tok', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (b: Buffer) => (out += b.toString()));
    p.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), 15_000);
    p.once('error', reject);
    p.once('exit', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

/**
 * Takes a little more of the disk (64 kB, far from the threshold either way) and waits until a check has read it
 * (the free-bytes gauge drops): the checks go on, and at least one ran since.
 */
async function laterReading(d: RunningDaemon, fs: SmallFs, labels: Record<string, string>): Promise<void> {
  const free = async () => metricValue(d.url, 'watchdog_disk_free_bytes', labels);
  const before = await free();
  if (before === null) throw new Error('no watchdog_disk_free_bytes for the instances');
  await writeFile(join(fs.path, `.more-${++extra}`), Buffer.alloc(64 * 1024));
  await waitFor('a check reading the disk again', async () => ((await free()) ?? before) < before, 10_000);
}
let extra = 0;

test('disk :: fill, every view says so and one chat message; free, one more', async (ctx) => {
  const tmp = await tempDir('wd-e2e-disk-');
  ctx.cleanup = tmp.cleanup;
  ctx.fs = mountSmallFs(8 * MB);
  ctx.hook = await startWebhookReceiver();
  const root = join(ctx.fs.path, 'instances');
  await mkdir(root);
  const program = await writeServerScript(join(tmp.path, 'server.sh'), fixture('log-starts.mjs'));
  const yaml = testConfig({
    webhook: ctx.hook.url,
    instances: [{ port: await freePort(), runCommand: program }],
    extra: ['Disk:', '  LowFreeMegabytes: 2', '  LowFreePercent: 50', '  CheckSeconds: 0.1'].join('\n'),
  }).replace('Servers:\n', `Servers:\n  InstanceRoot: ${JSON.stringify(root)}\n`);
  const d = await startDaemon(yaml, { dir: tmp.path });
  ctx.daemon = d;
  const before = await waitStatus(d, 'demo', 'tok', 'server.running', running);

  const ok = await waitFor('a first disk reading in /health', async () => {
    const h = await health(d);
    return h.body.disk?.length === 2 ? h : undefined;
  });
  assert.is(ok.code, 200);
  assert.is(ok.body.status, 'ok');
  assert.equal(
    ok.body.disk?.map((r) => [r.holds, r.low]),
    [
      ['instances', false],
      ['working folder', false],
    ],
  );

  ctx.fs.fill(1 * MB);
  const low = await waitFor('the disk-low chat message', () => diskMessages(ctx.hook as WebhookReceiver)[0], 10_000);
  // About 1 MB is left: the server's own writes and tmpfs's pages put it either side of 1 MB (kB or MB).
  const figures = `instances on ${ctx.fs.path}: \\d+(\\.\\d)? (kB|MB) free of 8(\\.\\d)? MB \\(\\d+(\\.\\d)? %\\), below the 2 MB threshold`;
  assert.match(low.content, new RegExp(`^Disk space is low: ${figures}\\.$`), `the chat said: ${low.content}`);

  const h = await health(d);
  assert.is(h.code, 200, 'a full disk does not fail the health check');
  assert.is(h.body.status, 'degraded');
  assert.match(h.body.problems?.[0] ?? '', new RegExp(`^disk space low: ${figures}$`));

  const metrics = await (await fetch(`${d.url}/metrics`)).text();
  const labels = { holds: 'instances', mount: ctx.fs.path };
  const shown = `holds="instances",mount="${ctx.fs.path}"`;
  assert.match(metrics, `watchdog_disk_low{${shown}} 1`);
  assert.match(metrics, new RegExp(`watchdog_disk_free_bytes\\{${shown}\\} \\d+`));
  assert.match(metrics, new RegExp(`watchdog_disk_total_bytes\\{${shown}\\} 8\\d{6}`));
  assert.match(metrics, /watchdog_disk_low\{holds="working folder",mount="[^"]+"\} 0/);

  const status = (await statusOf(d, 'demo', 'tok')) as unknown as { disk?: Array<{ holds: string; low: boolean }> };
  assert.ok(status.disk?.find((r) => r.holds === 'instances')?.low, 'the status JSON says the disk is low');
  assert.match(await cliStatus(d), new RegExp(`disk space low: ${figures}`));
  const page = await (await fetch(`${d.url}/`)).text();
  assert.match(
    page,
    new RegExp(
      `<div id="disk-banner" class="disk-banner" role="alert"><p class="disk-line">Disk space low: ${figures}</p>`,
    ),
  );

  // Later checks that see it still low (a reading with less free space than before): still one message.
  await laterReading(d, ctx.fs, labels);
  await chatFlushed(d, ctx.hook, 'demo', 'tok');
  assert.is(diskMessages(ctx.hook).length, 1, 'one chat message while it stays low');
  assert.is(logLines(d, /disk space low:/).length, 1, 'one crossing while it stays low');
  const still = await statusOf(d, 'demo', 'tok');
  assert.is(still.pid, before.pid, 'the server runs on');

  ctx.fs.release();
  const back = await waitFor('the recovered chat message', () => diskMessages(ctx.hook as WebhookReceiver)[1], 10_000);
  assert.match(back.content, /^Disk space is back: instances on .*, above the 2 MB threshold\.$/);
  await laterReading(d, ctx.fs, labels);
  await chatFlushed(d, ctx.hook, 'demo', 'tok');
  assert.is(diskMessages(ctx.hook).length, 2, 'one message each way');
  assert.is(logLines(d, /disk space recovered:/).length, 1, 'one crossing back');
  assert.is((await health(d)).body.status, 'ok');
});

s.run();
