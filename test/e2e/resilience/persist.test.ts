import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { startDaemon, type RunningDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import {
  bogusLaunchRecord, crash, fixedUrls, isAlive, killGroup, logLines, pidsWith, running, sleep, startSleep, waitStatus,
} from './_support.ts';

const test = suite('e2e :: PersistServers: servers outlive the daemon and are adopted (DESIGN §3, §7, §10)');

const TOKEN = 'tok';
const TIMEOUT_S = 3;

test('SIGKILL, then SIGTERM: the same pids are adopted, nothing is launched twice, check-ins, logs and the hang timeout carry on', async () => {
  const tmp = await tempDir('wd-persist-');
  const unrelated = startSleep();
  const [pa, pb, urls] = [await freePort(), await freePort(), await freePort()];
  const env = 'EnvironmentVariables: { TICK_MS: "200", FIXTURE_LIFETIME_MS: "120000" }';
  const yaml = fixedUrls(testConfig({
    persist: true,
    instances: [
      { key: 'a', port: pa, runCommand: fixture('echo-env.mjs'), timeoutSeconds: TIMEOUT_S, extra: `      ${env}` },
      { key: 'b', port: pb, runCommand: fixture('echo-env.mjs'), timeoutSeconds: TIMEOUT_S, extra: `      ${env}` },
    ],
  }), urls);
  // a's data.json names a pid that now belongs to an unrelated process (wrong start time): never adopted, never killed.
  const aDir = join(tmp.path, 'instances/a');
  await mkdir(aDir, { recursive: true });
  await writeFile(join(aDir, 'data.json'), bogusLaunchRecord(unrelated.pid, aDir));
  const serverPids = new Set<number>();
  const daemons: RunningDaemon[] = [];
  const start = async () => {
    const d = await startDaemon(yaml, { dir: tmp.path });
    daemons.push(d);
    return d;
  };
  const both = async (d: RunningDaemon, what: string, pred: (key: string, s: { pid: number | null; state: string }) => boolean) => {
    const out: Record<string, number> = {};
    for (const key of ['a', 'b']) {
      const s = await waitStatus(d, key, TOKEN, what, (st) => running(st) && pred(key, st));
      out[key] = s.pid!;
      serverPids.add(s.pid!);
    }
    return out;
  };
  try {
    // 1. First daemon: launches both; the unrelated pid in a's data.json is left alone.
    const d1 = await start();
    const first = await both(d1, 'running', () => true);
    assert.is.not(first.a, unrelated.pid);
    assert.ok(isAlive(unrelated.pid), 'the unrelated process was not killed');
    assert.match(d1.log(), /\[watchdog:a\] the server recorded in data\.json is gone \(or its pid was reused\); nothing to adopt/);

    // 2. Crash: the servers live on.
    await crash(d1);
    await sleep(300);
    assert.ok(isAlive(first.a!) && isAlive(first.b!), 'servers survive a SIGKILLed daemon');

    // 3. Next start adopts each by pid; nothing new is launched.
    const t2 = Date.now();
    const d2 = await start();
    const adopted = await both(d2, 'adopted', (key, st) => st.pid === first[key]);
    assert.equal(adopted, first, 'same pids');
    assert.is(logLines(d2, /adopted the server left running by the previous daemon/).length, 2);
    assert.is(logLines(d2, /server launched/).length, 0, 'no duplicate launched');
    for (const key of ['a', 'b']) {
      assert.equal(await pidsWith(join(tmp.path, 'instances', key, 'config.toml')), [first[key]], `exactly one ${key} server`);
    }
    // Check-ins keep authenticating with the restored secret, past a whole TimeoutSeconds.
    for (const key of ['a', 'b']) {
      await waitStatus(d2, key, TOKEN, 'a check-in to the new daemon', (s) => s.lastCheckinAt !== null && Date.parse(s.lastCheckinAt) > t2);
    }
    const logBefore = (await stat(join(aDir, 'logs/server.log'))).size;
    await sleep(TIMEOUT_S * 1000 + 500);
    for (const key of ['a', 'b']) {
      const s = await d2.status(key, TOKEN);
      assert.is(s.state, 'running', `${key} still running after TimeoutSeconds`);
      assert.is(s.pid, first[key]);
      assert.is(s.restarts, 0);
    }
    // Its log keeps flowing to logs/ (the server writes it), and is echoed into the new daemon's log.
    assert.ok((await stat(join(aDir, 'logs/server.log'))).size > logBefore, 'server.log grows after adoption');
    assert.ok(logLines(d2, /\[watchdog:a:server\] tick \d+/).length > 0, 'adopted server output echoed');

    // 4. An adopted server that dies is relaunched like any other.
    killGroup(first.a);
    const relaunched = await waitStatus(d2, 'a', TOKEN, 'relaunched', (s) => running(s) && s.pid !== first.a);
    serverPids.add(relaunched.pid!);
    assert.is((await d2.status('b', TOKEN)).pid, first.b, 'b untouched');

    // 5. SIGTERM with PersistServers: the daemon exits, the servers stay, and the next daemon adopts them.
    assert.is(await d2.stop(), 0, 'daemon exit code');
    const left = { a: relaunched.pid!, b: first.b! };
    assert.ok(isAlive(left.a) && isAlive(left.b), 'servers survive SIGTERM');
    const d3 = await start();
    assert.equal(await both(d3, 'adopted again', (key, st) => st.pid === left[key as 'a' | 'b']), left);
    assert.is(logLines(d3, /server launched/).length, 0);

    // 6. The check-in timeout is armed for an adopted server: one that stops checking in is killed and relaunched.
    process.kill(left.b, 'SIGSTOP');
    const after = await waitStatus(d3, 'b', TOKEN, 'hang kill and relaunch', (s) => running(s) && s.pid !== left.b, 20_000);
    serverPids.add(after.pid!);
    await waitFor('the stopped server gone', () => !isAlive(left.b), 5000);
    assert.ok(isAlive(unrelated.pid), 'the unrelated process is still alive at the end');
  } finally {
    for (const d of daemons) await d.stop();
    // PersistServers: the last daemon detached from its servers on exit; they are ours to end.
    for (const pid of serverPids) killGroup(pid);
    unrelated.proc.kill('SIGKILL');
    await tmp.cleanup();
  }
});

test.run();
