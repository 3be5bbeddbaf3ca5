import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import * as rs from './_support/daemon-crash.ts';

/**
 * Found by the soak (bench/soak, seed 20261125): a daemon SIGKILLed after spawning a server but before writing
 * its launch record to data.json left a server the next daemon could not see; it launched a second one beside
 * it (the first kept the port, the second could not bind it). Now the launch is recorded as `spawning` before the
 * spawn, and the next daemon finds that server by its secret. Simulated here by turning a real launch record back
 * into the spawning record it was a moment before, as if the daemon had died in between.
 */
const test = suite('e2e :: a server whose launch the killed daemon had not recorded yet');

const TOKEN = 'tok';

/** Turns the launch record back into a spawning record, or (`lost`) drops both and records an operator's stop. */
async function unrecord(dir: string, lost = false): Promise<void> {
  const file = join(dir, 'instances/a/data.json');
  const data = JSON.parse(await readFile(file, 'utf8')) as { launch: Record<string, unknown> | null };
  assert.ok(data.launch, 'the first daemon recorded its launch');
  const { pid: _pid, startTime: _startTime, ...spawning } = data.launch;
  const records = lost
    ? { launch: null, spawning: null, stopped: { by: 'test', at: new Date().toISOString() } }
    : { launch: null, spawning };
  await writeFile(file, JSON.stringify({ ...data, ...records }), { mode: 0o600 });
}

const yamlFor = (port: number, urls: number) => (persist: boolean) =>
  rs.fixedUrls(
    testConfig({ instances: [{ key: 'a', port, runCommand: fixture('echo-env.mjs'), timeoutSeconds: 3 }], persist }),
    urls,
  );

for (const persist of [true, false]) {
  test(`unrecorded-spawn :: PersistServers ${persist}: it is ${persist ? 'adopted' : 'shut down before the new launch'}, never doubled`, async () => {
    const tmp = await tempDir('wd-unrecorded-');
    const [port, urls] = [await freePort(), await freePort()];
    const yaml = yamlFor(port, urls);
    const daemons: RunningDaemon[] = [];
    const pids = new Set<number>();
    try {
      // Launched with PersistServers true so the server writes its own log and outlives the killed daemon.
      const d1 = await startDaemon(yaml(true), { dir: tmp.path });
      daemons.push(d1);
      const a1 = (await rs.waitStatus(d1, 'a', TOKEN, 'server.running', rs.running)).pid!;
      pids.add(a1);
      await rs.crash(d1);
      await unrecord(tmp.path);

      const d2 = await startDaemon(yaml(persist), { dir: tmp.path });
      daemons.push(d2);
      const a2 = await rs.waitStatus(d2, 'a', TOKEN, 'server.running', rs.running, 15_000);
      pids.add(a2.pid!);
      assert.match(d2.log(), /found a server the previous daemon launched but had not recorded yet/);
      if (persist) {
        assert.is(a2.pid, a1, 'the unrecorded server is adopted');
        await rs.waitStatus(d2, 'a', TOKEN, 'checking in', (s) => s.lastCheckinAt !== null);
      } else {
        assert.is.not(a2.pid, a1);
        assert.not.ok(rs.isAlive(a1), 'the unrecorded server was shut down');
        assert.match(d2.log(), /shutting down a server left behind/);
      }
      const copies = await rs.pidsWith(join(tmp.path, 'instances/a/config.toml'));
      assert.equal(copies, [a2.pid], 'exactly one server for the instance');
    } finally {
      for (const d of daemons) await d.stop();
      for (const pid of pids) rs.killGroup(pid);
      await tmp.cleanup();
    }
  });
}

/**
 * Also found by the soak: on a full disk neither record reaches data.json, and the daemon is killed. The next one
 * finds the server by its tracking (cgroup or marker) at start and ends it; before, it was only found by the next
 * launch's sweep, so it kept playing and writing its log meanwhile, and an instance left stopped never launched.
 */
test('unrecorded-spawn :: a server with no record at all is ended at start, even of a stopped instance', async () => {
  const tmp = await tempDir('wd-unrecorded-');
  const yaml = yamlFor(await freePort(), await freePort());
  const daemons: RunningDaemon[] = [];
  let a1: number | null = null;
  try {
    const d1 = await startDaemon(yaml(true), { dir: tmp.path });
    daemons.push(d1);
    a1 = (await rs.waitStatus(d1, 'a', TOKEN, 'server.running', rs.running)).pid!;
    await rs.crash(d1);
    await unrecord(tmp.path, true);
    assert.ok(rs.isAlive(a1), 'the server outlived the killed daemon');

    const d2 = await startDaemon(yaml(true), { dir: tmp.path });
    daemons.push(d2);
    // Its whole launch goes: the server, and any process it started (in any order).
    const swept = new RegExp(`left by the previous daemon's launches.*pids="?[\\d ]*\\b${a1}\\b`);
    await waitFor('the sweep at start in the log', () => swept.test(d2.log()), 15_000);
    assert.not.ok(rs.isAlive(a1), 'the server nothing recorded was ended');
    const status = await rs.waitStatus(d2, 'a', TOKEN, 'stopped', (s) => s.state.startsWith('stopped'));
    assert.is(status.pid, null);
    assert.match(d2.log(), /stays stopped/);
    assert.equal(await rs.pidsWith(join(tmp.path, 'instances/a/config.toml')), [], 'no server runs for the instance');
  } finally {
    for (const d of daemons) await d.stop();
    if (a1 !== null) rs.killGroup(a1);
    await tmp.cleanup();
  }
});

test.run();
