import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEMO, testConfig } from '../_support/config.ts';
import { startDaemon } from '../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../_support/env.ts';
import { fixture, writeServerScript } from '../_support/fixtures.ts';
import { startWebhookReceiver } from '../_support/webhook.ts';

const test = suite('e2e :: servers that fail to start');

test('exits at once three times → stopped.failing with exactly one webhook; restart clears it', async () => {
  const hook = await startWebhookReceiver();
  const tmp = await tempDir('wd-e2e-');
  const script = await writeServerScript(join(tmp.path, 'server.sh'), fixture('exit-at-once.mjs'));
  const port = await freePort();
  const d = await startDaemon(testConfig({ webhook: hook.url, instances: [{ port, runCommand: script }] }), {
    dir: tmp.path,
  });
  try {
    const s = await waitFor(
      'stopped.failing',
      async () => {
        const st = await d.status('demo', 'tok');
        return st.state === 'stopped.failing' ? st : undefined;
      },
      20_000,
    );
    assert.is(s.startupFailures, 3);
    await waitFor('failing notification', () => hook.messages.length >= 1);
    await new Promise((r) => setTimeout(r, 1000));
    assert.is(
      hook.messages.length,
      1,
      `exactly one notification: ${JSON.stringify(hook.messages.map((m) => m.content))}`,
    );
    assert.match(hook.messages[0]!.content, /`demo`.*failing to start/);
    assert.is((await d.status('demo', 'tok')).state, 'stopped.failing', 'stays down until told');

    // The operator fixes the server and restarts: the failure count is cleared and it runs.
    await writeServerScript(script, DEMO);
    assert.is(await d.control('demo', 'tok', 'restart'), 200);
    const back = await waitFor(
      'running',
      async () => {
        const st = await d.status('demo', 'tok');
        return st.state === 'running' ? st : undefined;
      },
      15_000,
    );
    assert.is(back.startupFailures, 0);
  } finally {
    await d.stop();
    await tmp.cleanup();
    await hook.close();
  }
});

test('RunCommand missing → counted as startup failures with a clear log line; the daemon stays up', async () => {
  const port = await freePort();
  const d = await startDaemon(testConfig({ instances: [{ port, runCommand: '/nonexistent/server' }] }));
  try {
    await waitFor('stopped.failing', async () => (await d.status('demo', 'tok')).state === 'stopped.failing', 20_000);
    assert.match(d.log(), /\/nonexistent\/server/);
    const health = await fetch(`${d.url}/health`);
    assert.is(health.status, 200, 'daemon alive');
  } finally {
    await d.stop();
    await d.cleanup();
  }
});

test.run();
