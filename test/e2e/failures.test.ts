import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DEMO, testConfig } from '../_support/config.ts';
import { waitState, withDaemons } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { fixture, writeServerScript } from '../_support/fixtures.ts';

const test = suite('e2e :: servers that fail to start');

test('failures :: exits at once three times → stopped.failing with exactly one webhook; restart clears it', () =>
  withDaemons({ webhook: true }, async ({ dir, hook, start }) => {
    const script = await writeServerScript(join(dir, 'server.sh'), fixture('exit-at-once.sh'));
    const port = await freePort();
    const d = await start(testConfig({ webhook: hook!.url, instances: [{ port, runCommand: script }] }));
    const s = await waitState(d, 'demo', 'tok', 'stopped.failing', { timeoutMs: 20_000 });
    assert.is(s.startupFailures, 3);
    await waitFor('failing notification', () => hook!.messages.length >= 1);
    assert.match(hook!.messages[0]!.content, /`demo`.*failing to start/);
    assert.is((await d.status('demo', 'tok')).state, 'stopped.failing', 'stays down until told');

    // The operator fixes the server and restarts: the failure count is cleared and it runs.
    await writeServerScript(script, DEMO);
    assert.is(await d.control('demo', 'tok', 'restart'), 200);
    const back = await waitState(d, 'demo', 'tok', 'server.running');
    assert.is(back.startupFailures, 0);
    // Nothing launched it between giving up and the restart request: three launches, then the operator's.
    const log = d.log();
    const gaveUp = log.indexOf('state stopped.failing');
    const told = log.indexOf('control: restart', gaveUp);
    assert.ok(gaveUp >= 0 && told > gaveUp, 'gave up, then the restart request');
    assert.is(log.slice(0, gaveUp).match(/\] server launched/g)?.length, 3, 'three launches before it gave up');
    assert.not.match(log.slice(gaveUp, told), /server launched/, 'not relaunched while failing');

    // A stop is told in chat after it: the webhook posts in order, so a second failing notice would have come first.
    assert.is(await d.control('demo', 'tok', 'stop'), 200);
    await waitFor('the stop notification', () => hook!.messages.some((m) => /was stopped on request/.test(m.content)));
    const sent = hook!.messages.map((m) => m.content);
    assert.is(sent.length, 2, `exactly one failing notice, then the stop: ${JSON.stringify(sent)}`);
    assert.match(sent[1]!, /^Server `demo` was stopped on request/);
  }));

test('failures :: RunCommand missing → counted as startup failures with a clear log line; the daemon stays up', () =>
  withDaemons({}, async ({ start }) => {
    const port = await freePort();
    const d = await start(testConfig({ instances: [{ port, runCommand: '/nonexistent/server' }] }));
    await waitState(d, 'demo', 'tok', 'stopped.failing', { timeoutMs: 20_000 });
    assert.match(d.log(), /\/nonexistent\/server/);
    const health = await fetch(`${d.url}/health`);
    assert.is(health.status, 200, 'daemon alive');
  }));

test.run();
