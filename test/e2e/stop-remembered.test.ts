/**
 * An operator's stop is remembered: kept in data.json with who and when, the instance stays stopped when
 * the daemon starts again, until a restart (`watchdog start <key>`, the dashboard's Start). A daemon shutdown is not
 * an operator's stop.
 * The real daemon, the demo server, real restarts of the daemon in one folder.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runMain } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { type RunningDaemon, startDaemon, waitState } from '../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../_support/env.ts';

const test = suite('e2e :: a stop is remembered across daemon restarts');
const TOKEN = 'tok';

test('stop-remembered :: stop, daemon restart: still stopped, saying who stopped it; restart, daemon restart: running', async () => {
  const dir = await tempDir('wd-stop-kept-');
  const yaml = testConfig({ instances: [{ key: 'lrp', port: await freePort() }] });
  let d: RunningDaemon | null = null;
  try {
    d = await startDaemon(yaml, { dir: dir.path });
    await waitState(d, 'lrp', TOKEN, 'server.running');
    const stop = await runMain(['stop', 'lrp', '--wait', '--url', d.url, '--token', TOKEN], { cwd: dir.path });
    assert.is(stop.code, 0, stop.stderr);
    const data = JSON.parse(await readFile(join(dir.path, 'instances/lrp/data.json'), 'utf8')) as {
      stopped: { by: string; at: string } | null;
    };
    assert.is(data.stopped?.by, 'with its API token from 127.0.0.1');
    assert.ok(!Number.isNaN(Date.parse(data.stopped?.at ?? '')), 'when');

    // The daemon goes and comes back: the instance stays stopped, and says why.
    assert.is(await d.stop(), 0);
    d = await startDaemon(yaml, { dir: dir.path });
    await waitState(d, 'lrp', TOKEN, 'stopped.idle');
    const kept = (await d.status('lrp', TOKEN)) as unknown as { state: string; pid: number | null; stoppedBy: unknown };
    assert.is(kept.state, 'stopped.idle', 'not launched by the daemon start');
    assert.is(kept.pid, null);
    assert.equal(kept.stoppedBy, data.stopped);
    await waitFor('the daemon saying why it stays stopped', () =>
      d!.log().includes('stays stopped: stopped with its API token from 127.0.0.1 at'),
    );
    const table = await runMain(['status', 'lrp', '--url', d.url, '--token', TOKEN], { cwd: dir.path });
    assert.match(table.stdout, `lrp stopped with its API token from 127.0.0.1 at ${data.stopped?.at}`);

    // `watchdog start lrp` (a restart, sent only to a stopped instance) starts it and forgets the stop; a daemon
    // shutdown is not a stop, so it runs after the next start.
    const start = await runMain(['start', 'lrp', '--wait', '--url', d.url, '--token', TOKEN], { cwd: dir.path });
    assert.is(start.code, 0, start.stderr);
    assert.match(start.stdout, /restart of lrp done: running, pid \d+/);
    // Up to that request this daemon launched nothing: its log has no launch before it.
    const log = d.log();
    const asked = log.indexOf('[watchdog:lrp] control: restart');
    assert.ok(asked > 0, 'the start request is logged');
    assert.not.match(log.slice(0, asked), /server launched/, 'not launched by the daemon start');
    const again = await runMain(['start', 'lrp', '--url', d.url, '--token', TOKEN], { cwd: dir.path });
    assert.is(again.code, 0, again.stderr);
    assert.is(
      again.stdout,
      'lrp is server.running, not stopped; nothing to start (watchdog restart lrp restarts it)\n',
    );
    assert.is(((await d.status('lrp', TOKEN)) as unknown as { stoppedBy: unknown }).stoppedBy, null);
    assert.is(await d.stop(), 0);
    d = await startDaemon(yaml, { dir: dir.path });
    await waitState(d, 'lrp', TOKEN, 'server.running');
    const after = JSON.parse(await readFile(join(dir.path, 'instances/lrp/data.json'), 'utf8')) as { stopped: unknown };
    assert.is(after.stopped, null);
  } finally {
    await d?.stop();
    await dir.cleanup();
  }
});

test.run();
