import { readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type DaemonScratch, type RunningDaemon, withDaemons } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { crash, fixedUrls, killGroup, running, waitStatus } from '../resilience/_support/daemon-crash.ts';

/**
 * Found by the soak: with PersistServers a chatty server's logs/ was removed, the daemon SIGKILLed and restarted, and
 * server.log reached 12 MiB, server.log.1 after a launch 12.5 MiB, for a bound of 10 MiB. A server writes its own
 * server.log then, and while no daemon follows it (killed, starting, shutting a leftover down) nothing bounds it; a
 * daemon adopting a server that writes into a removed server.log followed the copy nobody writes any more.
 * Every file in logs/ is watched the whole time: a rotated one within maxBytes and a line, server.log within
 * maxBytes and what one follow interval (250 ms) brings, whenever a daemon has had a look at it.
 */

const MAX = 64 * 1024;
/** A chat line is about 72 bytes, the daemon's own lines longer (a path): one line of slack. */
const LINE = 256;
/** The chatty fixture prints about 72 KB/s: 18 KB per follow interval, doubled for a loaded machine. */
const FOLLOW_SLACK = 40 * 1024;
const TOKEN = 'tok';

/** Samples the sizes in logs/ every 20 ms; server.log only while `watched` (a daemon follows it). */
function watchSizes(logDir: string) {
  const over: string[] = [];
  let watched = true;
  const timer = setInterval(() => {
    let names: string[] = [];
    try {
      names = readdirSync(logDir);
    } catch {
      return;
    }
    for (const name of names) {
      let size = 0;
      try {
        size = statSync(join(logDir, name)).size;
      } catch {
        continue;
      }
      const limit = name === 'server.log' ? (watched ? MAX + FOLLOW_SLACK : Infinity) : MAX + LINE;
      if (size > limit && over.length < 20) over.push(`${name}: ${size} bytes`);
    }
  }, 20);
  return {
    over,
    set watched(on: boolean) {
      watched = on;
    },
    stop: () => clearInterval(timer),
  };
}

async function setup(s: DaemonScratch) {
  const [port, serverPort] = [await freePort(), await freePort()];
  const yaml = (persist: boolean) =>
    fixedUrls(
      testConfig({
        persist,
        instances: [
          {
            key: 'chatty',
            port: serverPort,
            runCommand: fixture('chatty.mjs'),
            extra: '      EnvironmentVariables: { FIXTURE_LIFETIME_MS: "90000" }',
          },
        ],
        extra: `  LogRetrySeconds: 0.2\nLogs:\n  ServerLogMaxBytes: ${MAX}\n  ServerLogFiles: 3`,
      }),
      port,
    );
  return { yaml, logDir: join(s.dir, 'instances', 'chatty', 'logs') };
}

const size = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/**
 * The number of the newest chat line in logs/: the last one in server.log, or in server.log.1 just after a rotation.
 * Not the highest of all files (lastChat): a relaunched server numbers its lines from 1 again, below its
 * predecessor's still in the rotated files.
 */
async function newestChat(logDir: string): Promise<number> {
  for (const name of ['server.log', 'server.log.1']) {
    const text = await readFile(join(logDir, name), 'utf8').catch(() => '');
    const last = [...text.matchAll(/^chat (\d+) /gm)].at(-1);
    if (last) return Number(last[1]);
  }
  return 0;
}

/** Lines keep arriving in logs/ from the server running now: its newest chat number grows by `more`. */
async function linesArrive(logDir: string, what: string, more = 200): Promise<void> {
  const from = await newestChat(logDir);
  await waitFor(what, async () => (await newestChat(logDir)) > from + more, 10_000);
}

/** Until server.log has grown unwatched to `times` its bound (no daemon follows it). */
const grows = (logDir: string, times: number) =>
  waitFor(`server.log past ${times} x its bound`, () => size(join(logDir, 'server.log')) > times * MAX, 15_000);

const test = suite('e2e :: faults: server logs bounded with PersistServers, across removal and daemon restarts');
const pids = new Set<number>();
test.after(() => {
  for (const pid of pids) killGroup(pid);
});

async function started(d: RunningDaemon, notPid?: number): Promise<number> {
  const st = await waitStatus(d, 'chatty', TOKEN, 'server.running', (x) => running(x) && x.pid !== notPid, 30_000);
  pids.add(st.pid!);
  return st.pid!;
}

/** The first daemon (PersistServers) and its chatty server, under a size watch of logs/ that `body` steers. */
interface ChattyRun {
  s: DaemonScratch;
  yaml: (persist: boolean) => string;
  logDir: string;
  sizes: ReturnType<typeof watchSizes>;
  d1: RunningDaemon;
  pid: number;
}

async function withChattyServer(body: (run: ChattyRun) => Promise<void>): Promise<void> {
  await withDaemons({ prefix: 'wd-plogs-' }, async (s) => {
    const { yaml, logDir } = await setup(s);
    const sizes = watchSizes(logDir);
    try {
      const d1 = await s.start(yaml(true));
      await body({ s, yaml, logDir, sizes, d1, pid: await started(d1) });
    } finally {
      sizes.stop();
    }
  });
}

test('persist-logs-bound :: logs/ removed, the daemon killed and restarted: the adopter copies the removed file, bounded', async () => {
  await withChattyServer(async ({ s, yaml, logDir, sizes, d1, pid }) => {
    await waitFor('a rotation', () => size(join(logDir, 'server.log.1')) > 0, 10_000);
    // The daemon may write a file while rm empties the folder (ENOTEMPTY): rm tries again.
    await rm(logDir, { recursive: true, force: true, maxRetries: 10 });
    await linesArrive(logDir, 'lines copied into a new server.log');

    sizes.watched = false;
    await crash(d1);
    // While no daemon runs, the server's lines pile up in the removed file, for the adopter to find.
    const removed = () => statSync(`/proc/${pid}/fd/1`).size;
    const atCrash = removed();
    await waitFor('lines written into the removed file with no daemon', () => removed() > atCrash + 4096, 10_000);
    const d2 = await s.start(yaml(true));
    assert.is(await started(d2), pid, 'adopted, not relaunched');
    // The bound holds once the adopter has had a look: its first lines copied into logs/.
    await linesArrive(logDir, 'the adopter copying the removed file', 1);
    sizes.watched = true;
    await linesArrive(logDir, 'the adopter copies what the server writes into the removed file');
    assert.is(statSync(`/proc/${pid}/fd/1`).nlink, 0, 'the server still writes into the removed file');
    assert.ok(statSync(`/proc/${pid}/fd/1`).size < MAX + FOLLOW_SLACK, 'the removed file is emptied, not left to grow');
    await waitFor('rotation of the copy', () => size(join(logDir, 'server.log.2')) > 0, 15_000);

    // A relaunch writes the new server.log itself.
    killGroup(pid);
    const next = await started(d2, pid);
    await waitFor(
      'the new server writes server.log itself',
      () => statSync(`/proc/${next}/fd/1`).ino === statSync(join(logDir, 'server.log')).ino,
      10_000,
    );
    await waitFor(
      'a rotation after the relaunch',
      () =>
        /^chat \d+ /m.test(readFileSync(join(logDir, 'server.log.1'), 'utf8')) && size(join(logDir, 'server.log')) > 0,
      10_000,
    );
    assert.equal(sizes.over, [], 'every file in logs/ within its bound');
    assert.not.match(d2.log(), /uncaught|unhandled/i);
  });
});

for (const persist of [true, false]) {
  test(`persist-logs-bound :: server.log grown while no daemon ran: the next daemon (PersistServers ${persist}) rotates it within the bound`, async () => {
    await withChattyServer(async ({ s, yaml, logDir, sizes, d1, pid }) => {
      sizes.watched = false;
      await crash(d1);
      await grows(logDir, 3);
      const d2 = await s.start(yaml(persist));
      const now = await started(d2, persist ? undefined : pid);
      assert.is(now === pid, persist, persist ? 'adopted' : 'the leftover shut down, a new server launched');
      await waitFor('server.log back within its bound', () => size(join(logDir, 'server.log')) < MAX, 10_000);
      sizes.watched = true;
      assert.ok(size(join(logDir, 'server.log.1')) <= MAX + LINE, 'the rotated file within its bound');
      assert.match(readFileSync(join(logDir, 'server.log.1'), 'utf8'), /bytes cut from the start/);
      await linesArrive(logDir, 'lines keep arriving');

      if (persist) {
        // Once more, with the server gone too before the next daemon: the launch rotates the grown file.
        sizes.watched = false;
        await crash(d2);
        await grows(logDir, 3);
        killGroup(now);
        const d3 = await s.start(yaml(persist));
        await started(d3, now);
        assert.ok(size(join(logDir, 'server.log.1')) <= MAX + LINE, 'rotated at launch within its bound');
        await waitFor('server.log back within its bound', () => size(join(logDir, 'server.log')) < MAX, 10_000);
        sizes.watched = true;
      } else {
        // Without PersistServers the new server's log is the daemon's pipe (a killed daemon takes it along, so
        // nothing grows unwatched): removed logs/ come back, rotation too.
        await rm(logDir, { recursive: true, force: true, maxRetries: 10 });
        await linesArrive(logDir, 'lines in a new server.log');
        await waitFor('a rotation after the removal', () => size(join(logDir, 'server.log.1')) > 0, 10_000);
      }
      await linesArrive(logDir, 'lines keep arriving after the launch');
      assert.equal(sizes.over, [], 'every file in logs/ within its bound');
    });
  });
}

test.run();
