import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import * as rs from './_support/daemon-crash.ts';

const test = suite('e2e :: PersistServers off: servers left by a crashed daemon are shut down before new ones launch');

const TOKEN = 'tok';

test('orphans :: SIGKILLed daemon: its leftover is found in data.json, shut down gracefully, then replaced; an unrelated pid is left alone', async () => {
  const tmp = await tempDir('wd-orphans-');
  const unrelated = rs.startSleep();
  // A node fixture dies of EPIPE once the daemon holding its stdout pipe is gone; a real server (which ignores
  // EPIPE) lives on. This wrapper gives the fixture its own output file, so it outlives the daemon like one.
  const script = join(tmp.path, 'own-log-server.sh');
  await writeFile(
    script,
    `#!/bin/sh\nexec "${process.execPath}" "${fixture('echo-env.mjs')}" "$@" >>"$PWD/own.log" 2>&1\n`,
  );
  await chmod(script, 0o755);
  const [pa, pb, urls] = [await freePort(), await freePort(), await freePort()];
  const yaml = rs.fixedUrls(
    testConfig({
      instances: [
        { key: 'a', port: pa, runCommand: script, timeoutSeconds: 3 },
        { key: 'b', port: pb, runCommand: fixture('echo-env.mjs'), timeoutSeconds: 3 },
      ],
    }),
    urls,
  );
  const daemons: RunningDaemon[] = [];
  const pids = new Set<number>();
  try {
    const d1 = await startDaemon(yaml, { dir: tmp.path });
    daemons.push(d1);
    const a1 = (await rs.waitStatus(d1, 'a', TOKEN, 'server.running', rs.running)).pid!;
    const b1 = (await rs.waitStatus(d1, 'b', TOKEN, 'server.running', rs.running)).pid!;
    pids.add(a1).add(b1);

    await rs.crash(d1);
    // a writes its own log: it tries to check in with nobody there, and goes on.
    const ownLog = join(tmp.path, 'instances/a/own.log');
    await rs.pingFailedSince(ownLog, await rs.sizeOf(ownLog));
    assert.ok(rs.isAlive(a1), 'the server outlived the crashed daemon');
    // b's record now names a pid that belongs to an unrelated process (with a start time it does not have).
    rs.killGroup(b1);
    const bDir = join(tmp.path, 'instances/b');
    await writeFile(join(bDir, 'data.json'), rs.bogusLaunchRecord(unrelated.pid, bDir));

    const d2 = await startDaemon(yaml, { dir: tmp.path });
    daemons.push(d2);
    const a2 = await rs.waitStatus(d2, 'a', TOKEN, 'replaced', (s) => rs.running(s) && s.pid !== a1);
    const b2 = await rs.waitStatus(d2, 'b', TOKEN, 'server.running', rs.running);
    pids.add(a2.pid!).add(b2.pid!);

    assert.not.ok(rs.isAlive(a1), 'the leftover is gone');
    const own = await readFile(join(tmp.path, 'instances/a/own.log'), 'utf8');
    assert.match(
      own,
      /Watchdog restarted, shutting down\.\.\./,
      'it was asked to shut down (POST /shutdown with its recorded secret)',
    );
    // Shut down before the new server launched: never two servers on one port.
    const lines = rs.logLines(
      d2,
      /\[watchdog:a\] (shutting down a server left behind|the leftover server exited after the shutdown request|server launched)/,
    );
    assert.is(lines.length, 3, lines.join('\n'));
    assert.match(lines[0]!, /shutting down a server left behind/);
    assert.match(lines[1]!, /the leftover server exited after the shutdown request/);
    assert.match(lines[2]!, /server launched/);
    assert.equal(await rs.pidsWith(join(tmp.path, 'instances/a/config.toml')), [a2.pid], 'exactly one a server');
    await rs.waitStatus(d2, 'a', TOKEN, 'checking in', (s) => s.lastCheckinAt !== null);

    // The pid in b's record belongs to someone else: not shut down, not killed.
    assert.ok(rs.isAlive(unrelated.pid), 'the unrelated process lives');
    assert.not.match(d2.log(), /\[watchdog:b\] shutting down a server left behind/);
    assert.is.not(b2.pid, unrelated.pid);

    assert.is(await d2.stop(), 0);
    await waitFor('servers shut down with the daemon', () => !rs.isAlive(a2.pid!) && !rs.isAlive(b2.pid!), 5000);
  } finally {
    for (const d of daemons) await d.stop();
    for (const pid of pids) rs.killGroup(pid);
    unrelated.proc.kill('SIGKILL');
    await tmp.cleanup();
  }
});

test.run();
