import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../_support/config.ts';
import { startDaemon } from '../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import { alive } from '../_support/procs.ts';

const test = suite('e2e :: daemon shutdown');

interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  pgrp: number;
}

/** /proc/<pid>/stat: state, parent and process group; null once the pid is gone. */
function procStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid, pgrp] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, state: state ?? '?', ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return null;
  }
}

/** Gone: ESRCH on kill(pid, 0), or a zombie (dead, only not reaped yet). */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
  }
  const st = procStat(pid);
  return st === null || st.state === 'Z';
}

/** Every live (non-zombie) process in process group `pgid` (a server leads its own: the daemon spawns it detached). */
function groupMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st && st.pgrp === pgid && st.state !== 'Z') found.push(st.pid);
  }
  return found;
}

/** SIGKILLs what is left of a server's group (cleanup after a failed test; only our daemon's servers). */
function killGroup(pid: number): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

const EXIT_SECONDS = 5;
const exitWindow = (yaml: string) =>
  yaml.replace(/^ {2}ShutdownExitSeconds: .*$/m, `  ShutdownExitSeconds: ${EXIT_SECONDS}`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`shutdown :: ${signal}: every server is shut down gracefully, the daemon exits 0, no process is left`, async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const d = await startDaemon(
      testConfig({
        instances: [
          { key: 'one', port: p1 },
          { key: 'two', port: p2 },
        ],
      }),
    );
    try {
      const pids = await Promise.all(
        ['one', 'two'].map((k) =>
          waitFor(
            `${k} running`,
            async () => {
              const s = await d.status(k, 'tok');
              return s.state === 'server.running' ? s.pid : undefined;
            },
            45_000,
          ),
        ),
      );
      const code = await d.stop(20_000, signal);
      assert.is(code, 0, 'daemon exit code');
      for (const pid of pids) assert.not.ok(alive(pid), `server ${pid} left running`);
      // Graceful: the demo server logged the watchdog's reason before exiting (echoed into the daemon log).
      assert.match(d.log(), /Watchdog stopping/);
    } finally {
      await d.stop();
      await d.cleanup();
    }
  });
}

test('shutdown :: SIGTERM with a forking server and one that ignores /shutdown: daemon exits 0; every server, child and group member is gone; the deaf one is killed only after the exit window', async () => {
  const tmp = await tempDir('wd-e2e-shutdown-');
  const pidsFile = join(tmp.path, 'forker.pids');
  // A fixture leaked by a failed run exits on its own after a minute.
  const lifetime = '      EnvironmentVariables: { FIXTURE_LIFETIME_MS: "60000" }';
  // A 5 s exit window (the test config's is 1 s): a cooperative server on a loaded machine may take more than 1 s to
  // exit after its answer, and would be killed like the deaf one.
  const d = await startDaemon(
    exitWindow(
      testConfig({
        instances: [
          { key: 'demo', port: await freePort() },
          {
            key: 'fork',
            port: await freePort(),
            runCommand: fixture('forker.mjs'),
            extra: `      EnvironmentVariables: { PIDS_FILE: ${JSON.stringify(pidsFile)}, FIXTURE_LIFETIME_MS: "60000" }`,
          },
          { key: 'deaf', port: await freePort(), runCommand: fixture('ignore-shutdown.mjs'), extra: lifetime },
        ],
      }),
    ),
  );
  const keys = ['demo', 'fork', 'deaf'] as const;
  const started: number[] = [];
  try {
    const pids = Object.fromEntries(
      await Promise.all(
        keys.map(
          async (k) =>
            [
              k,
              await waitFor(
                `${k} running`,
                async () => {
                  const s = await d.status(k, 'tok');
                  return s.state === 'server.running' ? s.pid : undefined;
                },
                45_000,
              ),
            ] as const,
        ),
      ),
    ) as Record<(typeof keys)[number], number>;
    started.push(...Object.values(pids));

    // The forker's two children: alive, its own, in its process group.
    const children = await waitFor(
      "the forker's children",
      async () => {
        const list = JSON.parse(await readFile(pidsFile, 'utf8')) as number[];
        return list.length === 2 && list.every((p) => !gone(p)) ? list : undefined;
      },
      10_000,
    );
    for (const child of children) {
      const st = procStat(child);
      assert.is(st?.ppid, pids.fork, `child ${child} is the forker's`);
      assert.is(st?.pgrp, pids.fork, `child ${child} is in the forker's process group`);
    }
    // Each server leads its own group; the forker's holds it and its children (the scan below can see them).
    for (const k of keys) assert.ok(groupMembers(pids[k]).includes(pids[k]), `${k} leads process group ${pids[k]}`);
    assert.ok(
      children.every((c) => groupMembers(pids.fork).includes(c)),
      "the group scan finds the forker's children",
    );
    const members = Object.fromEntries(keys.map((k) => [k, groupMembers(pids[k])])) as Record<
      (typeof keys)[number],
      number[]
    >;

    const termAt = Date.now();
    const code = await d.stop(20_000, 'SIGTERM');

    assert.is(code, 0, 'daemon exit code');
    for (const k of keys) {
      assert.ok(gone(pids[k]), `${k} server ${pids[k]} left running`);
      for (const m of members[k]) assert.ok(gone(m), `${k}: group member ${m} left running`);
      assert.equal(groupMembers(pids[k]), [], `${k}: process group ${pids[k]} not empty`);
    }
    for (const child of children) assert.ok(gone(child), `forker child ${child} left running`);

    // The deaf one answered /shutdown and stayed: killed, once, when ShutdownExitSeconds had passed since the
    // request (the request window only applies to an unanswered request). The kill's line is stamped by the
    // daemon's clock, no earlier than that after the SIGTERM (10 ms for clock rounding); load can only delay it.
    const log = d.log();
    const kills = log
      .split('\n')
      .filter((l) => l.includes('[watchdog:deaf] server did not exit after the shutdown request'));
    assert.is(kills.length, 1, kills.join('\n'));
    assert.ok(
      log.indexOf('[watchdog:deaf:server] ignoring shutdown') < log.indexOf(kills[0]!),
      'killed after it answered the request',
    );
    const killedAt = Date.parse(kills[0]!.slice(0, kills[0]!.indexOf(' ')));
    assert.ok(
      killedAt - termAt >= EXIT_SECONDS * 1000 - 10,
      `deaf server killed ${killedAt - termAt} ms after SIGTERM, before the ${EXIT_SECONDS} s exit window`,
    );
    assert.match(
      log,
      /\[watchdog:deaf:server\] ignoring shutdown: Watchdog stopping/,
      '/shutdown reached the deaf server',
    );
    assert.match(log, /\[watchdog:deaf\] server did not exit after the shutdown request; killing it .*waitedMs=5000/);
    // The others left on their own when asked.
    assert.match(
      log,
      /\[watchdog:fork:server\] Watchdog stopping, shutting down\.\.\./,
      'the forker was asked to shut down',
    );
    assert.not.match(log, /\[watchdog:(demo|fork)\] [^\n]*killing/, 'the cooperative servers were not killed');
  } finally {
    await d.stop();
    for (const pid of started) if (groupMembers(pid).length > 0) killGroup(pid);
    await d.cleanup();
    await tmp.cleanup();
  }
});

test.run();
