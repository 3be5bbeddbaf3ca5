import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runMain } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { withDaemons } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { fixture, writeServerScript } from '../_support/fixtures.ts';

const test = suite('e2e :: a hang loop is a loop');

test('hang-loop :: a server that hangs after each check-in: relaunches back off, two chat messages, one dump, lastExit hang', () =>
  withDaemons({ prefix: 'wd-hangloop-', webhook: true }, async ({ dir: tmp, hook, start }) => {
    const script = await writeServerScript(join(tmp, 'server.sh'), fixture('hang.mjs'));
    // A stand-in for the .NET createdump beside the program (a real core of node is ~800 MB): a small file per dump.
    await writeFile(join(tmp, 'createdump'), '#!/bin/sh\necho dump > "$3"\n');
    await chmod(join(tmp, 'createdump'), 0o755);
    const port = await freePort();
    const yaml = testConfig({
      webhook: hook!.url,
      // Long enough for a relaunch on a starved machine to check in before it counts as hung (a startup failure).
      instances: [{ port, runCommand: script, timeoutSeconds: 3 }],
    }).replace('DumpOnTimeout: false', 'DumpOnTimeout: true');
    const d = await start(yaml);
    const lines = (re: RegExp) =>
      d
        .log()
        .split('\n')
        .filter((l) => re.test(l)).length;
    const hangs = () => lines(/\[watchdog:demo\] state server\.stopping/);
    // Relaunches after the first hang wait in restarting.backoff.
    const backoffs = () => lines(/\[watchdog:demo\] state restarting\.backoff/);
    await waitFor(
      'five hang kills, three of them followed by a back-off',
      () => hangs() >= 5 && backoffs() >= 3,
      60_000,
    );
    assert.equal(
      hook!.messages.map((m) => m.content),
      [
        'Server `demo` timed out and will be killed. Check server logs for possible causes.',
        hook!.messages[1]?.content ?? '(none)',
      ],
    );
    assert.match(hook!.messages[1]!.content, /^Server `demo` keeps hanging; restarting with back-off \(next in \d/);
    const dumps = await readdir(join(tmp, 'instances/demo/dumps'));
    assert.is(dumps.length, 1, `one dump per loop: ${dumps.join(', ')}`);

    const cli = await runMain(['status', 'demo', '--json', '--url', d.url, '--token', 'tok'], { cwd: tmp });
    assert.is(cli.code, 0, cli.stderr);
    const status = JSON.parse(cli.stdout) as { lastExit: { reason: string; signal: string | null; at: string } | null };
    assert.is(status.lastExit?.reason, 'hang');
    assert.is(status.lastExit?.signal, 'SIGKILL');
    assert.ok(!Number.isNaN(Date.parse(status.lastExit?.at ?? '')), 'lastExit.at is a time');
    const serverLog = await readFile(join(tmp, 'instances/demo/logs/server.log'), 'utf8');
    const ends = serverLog
      .split('\n')
      .filter((l) => /watchdog: server \(pid \d+\) killed by signal SIGKILL ---$/.test(l));
    assert.ok(ends.length >= 5, `server.log has one line per run's end (${ends.length})`);
  }));

test.run();
