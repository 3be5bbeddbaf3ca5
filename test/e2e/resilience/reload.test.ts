import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type InstanceOpts, testConfig } from '../../_support/config.ts';
import { basic, startDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { isAlive, killGroup, logLines, running, statusOf, waitStatus } from './_support/daemon-crash.ts';

const test = suite('e2e :: configuration reload (file watch and SIGHUP)');

const ECHO = fixture('echo-env.mjs');

test('reload :: invalid keeps the running config; valid adds, removes (all of them) and updates; restart-only keys are not applied; SIGHUP rereads ApiTokenFile', async () => {
  const tmp = await tempDir('wd-reload-');
  const [pa, pb, px, pc] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const tokenFile = join(tmp.path, 'a.token');
  await writeFile(tokenFile, 'first\n');
  const a = (args: string[] = []): InstanceOpts => ({
    key: 'a',
    token: null,
    port: pa,
    runCommand: ECHO,
    args,
    extra: `      ApiTokenFile: ${tokenFile}`,
  });
  const inst = (key: string, port: number): InstanceOpts => ({ key, port, runCommand: ECHO });
  const yaml = testConfig({ instances: [a(), inst('b', pb), inst('x', px)] });
  const d = await startDaemon(yaml, { dir: tmp.path });
  const cfg = join(tmp.path, 'appsettings.yml');
  const pids = new Set<number>();
  const status = async (key: string, token: string) => {
    const res = await fetch(`${d.url}/instances/${key}/status`, { headers: { authorization: basic(key, token) } });
    return { code: res.status, body: (await res.json()) as { pid: number | null; state: string } };
  };
  try {
    const before: Record<string, number> = {};
    for (const [key, token] of [
      ['a', 'first'],
      ['b', 'tok'],
      ['x', 'tok'],
    ] as const) {
      before[key] = (await waitStatus(d, key, token, 'server.running', running)).pid!;
      pids.add(before[key]!);
    }

    // 1. Invalid: every problem is logged, nothing changes.
    const problems = () => logLines(d, /\[watchdog:config\]/).join('\n');
    await writeFile(
      cfg,
      yaml.replace(`ApiPort: ${pb}`, 'ApiPort: abc').replace(/TimeoutSeconds: \d+/, 'TimeoutSeconds: -1'),
    );
    await waitFor('the refusal', () => /configuration reload \(file change\) refused/.test(problems()), 10_000);
    await waitFor(
      'both problems listed',
      () => /Instances\.b\.ApiPort/.test(problems()) && /TimeoutSeconds/.test(problems()),
      5000,
    );
    for (const [key, token] of [
      ['a', 'first'],
      ['b', 'tok'],
      ['x', 'tok'],
    ] as const) {
      const s = await statusOf(d, key, token);
      assert.is(s.pid, before[key], `${key} untouched by an invalid file`);
    }

    // 2. Valid: b and x removed, c added, a's Arguments changed (next launch), Urls changed (needs a restart).
    const next = testConfig({ instances: [a(['--cvar', 'reload.marker=yes']), inst('c', pc)] }).replace(
      'Urls: http://127.0.0.1:0',
      'Urls: http://127.0.0.1:1',
    );
    await writeFile(cfg, next);
    await waitFor('the reload', () => /configuration reloaded \(file change\)/.test(d.log()), 15_000);
    const reloaded = logLines(d, /configuration reloaded/).at(-1)!;
    assert.match(reloaded, /added=c/);
    assert.match(reloaded, /removed=b,x/, 'every removed instance, not just the first');
    assert.match(reloaded, /updated=a/);
    assert.match(d.log(), /Urls changed: it needs a restart of the daemon and was not applied/);
    assert.is((await fetch(`${d.url}/health`)).status, 200, 'still listening where it was');

    const c = await waitStatus(d, 'c', 'tok', 'added and running', running);
    pids.add(c.pid!);
    for (const key of ['b', 'x']) {
      assert.is((await status(key, 'tok')).code, 404, `${key} left the registry`);
      await waitFor(`${key}'s server gone`, () => !isAlive(before[key]!), 10_000);
    }
    // Removed means shut down gracefully: the server was asked and said so.
    assert.match(d.log(), /\[watchdog:b:server\] Watchdog stopping, shutting down\.\.\./);
    assert.match(d.log(), /\[watchdog:x:server\] Watchdog stopping, shutting down\.\.\./);
    const a1 = await statusOf(d, 'a', 'first');
    assert.is(a1.pid, before.a, 'a keeps running: per-instance settings wait for its next launch');
    const argv = async (pid: number) => (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    assert.not.ok((await argv(a1.pid!)).includes('reload.marker=yes'));

    // 3. SIGHUP rereads ApiTokenFile (not a watched file): the new token works at once, the old one is refused.
    await writeFile(tokenFile, 'second\n');
    d.proc.kill('SIGHUP');
    await waitFor('the SIGHUP reload', () => /configuration reloaded \(SIGHUP\)/.test(d.log()), 10_000);
    assert.is((await status('a', 'first')).code, 401, 'old token refused');
    assert.is((await status('a', 'second')).code, 200, 'new token accepted');

    // 4. The next launch of a uses its new Arguments.
    assert.is(await d.control('a', 'second', 'restart'), 200);
    const a2 = await waitStatus(d, 'a', 'second', 'relaunched', (s) => running(s) && s.pid !== before.a);
    pids.add(a2.pid!);
    assert.ok((await argv(a2.pid!)).includes('reload.marker=yes'), 'new Arguments at the next launch');
    assert.is((await statusOf(d, 'c', 'tok')).pid, c.pid, 'c untouched by the SIGHUP reload');
  } finally {
    await d.stop();
    for (const pid of pids) killGroup(pid);
    await tmp.cleanup();
  }
});

test.run();
