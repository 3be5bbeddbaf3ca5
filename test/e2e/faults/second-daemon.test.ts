import { spawn } from 'node:child_process';
import { readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join, relative } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, ROOT, tempDir, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { writeWatchdogDb } from '../../fixtures/watchdog-db/build.ts';
import * as rs from '../resilience/_support/daemon-crash.ts';

/**
 * One daemon per folder: a second `watchdog start` where one runs (another --urls, another working folder
 * with the same instance root, or `watchdog import`) exits 1 at once naming the first, and changes nothing; a
 * SIGKILLed daemon leaves no lock behind; of two started at the same moment exactly one runs.
 */
interface Ctx {
  dir: string;
  yaml: string;
  first: RunningDaemon | null;
  daemons: RunningDaemon[];
  servers: Set<number>;
  pid: number;
  cleanups: Array<() => Promise<void>>;
}

const test = suite<Ctx>('e2e :: faults: a second daemon in the same folder', {
  dir: '',
  yaml: '',
  first: null,
  daemons: [],
  servers: new Set(),
  pid: 0,
  cleanups: [],
});

const TOKEN = 'tok';

interface Exited {
  code: number | null;
  out: string;
  /** The process was still running at the deadline (then killed): a hang, not a slow start. */
  hung: boolean;
}

/** Runs `bin/watchdog <args>` in `cwd` to its exit (SIGKILL after `timeoutMs`). */
function runWatchdog(cwd: string, args: string[], timeoutMs = 30_000): Promise<Exited> {
  const proc = spawn(process.execPath, [join(ROOT, 'bin/watchdog'), ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    proc.kill('SIGKILL');
  }, timeoutMs);
  return new Promise((resolve) =>
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, hung });
    }),
  );
}

/** Every file and folder under `dir` with its size and mtime, except the server's own log lines (it keeps writing). */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const rel = relative(dir, path);
    const s = await stat(path);
    const growing = /(^|\/)logs\/server/.test(rel);
    out[rel] = entry.isDirectory() || growing ? 'present' : `${s.size} ${s.mtimeMs}`;
  }
  return out;
}

/** Nothing accepts connections on `port` of 127.0.0.1. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(false);
    });
    sock.once('error', () => resolve(true));
  });
}

const message = (d: RunningDaemon, folder: string) =>
  `another watchdog (pid ${d.proc.pid}, listening on ${d.url}) is running in ${folder}`;

test.before(async (ctx) => {
  const tmp = await tempDir('wd-second-');
  ctx.dir = await realpath(tmp.path);
  ctx.cleanups.push(tmp.cleanup);
  const [game, urls] = [await freePort(), await freePort()];
  ctx.yaml = rs.fixedUrls(
    testConfig({
      persist: true,
      instances: [
        {
          key: 'a',
          port: game,
          runCommand: fixture('echo-env.mjs'),
          timeoutSeconds: 3,
          extra: '      EnvironmentVariables: { TICK_MS: "200", FIXTURE_LIFETIME_MS: "120000" }',
        },
      ],
    }),
    urls,
  );
});

test.after(async (ctx) => {
  for (const d of ctx.daemons) await d.stop();
  for (const pid of ctx.servers) rs.killGroup(pid);
  for (const c of ctx.cleanups) await c();
});

test('second-daemon :: a second daemon with other --urls exits 1 at once, names the first, and changes nothing', async (ctx) => {
  const first = await startDaemon(ctx.yaml, { dir: ctx.dir });
  ctx.daemons.push(first);
  ctx.first = first;
  const s = await rs.waitStatus(first, 'a', TOKEN, 'server.running', rs.running);
  ctx.pid = s.pid!;
  ctx.servers.add(ctx.pid);
  // Its launch written down: the files of a running instance, which the second daemon must leave as they are.
  await rs.waitStatus(first, 'a', TOKEN, 'a first check-in', (st) => st.lastCheckinAt !== null);
  await waitFor('the launch recorded in data.json', async () =>
    (await readFile(join(ctx.dir, 'instances/a/data.json'), 'utf8')).includes(`"pid": ${ctx.pid}`),
  );
  const before = await tree(ctx.dir);
  const data = await readFile(join(ctx.dir, 'instances/a/data.json'), 'utf8');

  const other = await freePort();
  const second = await runWatchdog(ctx.dir, ['start', '--urls', `http://127.0.0.1:${other}`]);
  assert.is(second.hung, false, `the second daemon ran on:\n${second.out}`);
  assert.is(second.code, 1, second.out);
  assert.ok(second.out.includes(message(first, join(ctx.dir, 'instances'))), second.out);
  // At once: refused before it read or made anything, so it never got as far as listening or launching.
  assert.not.match(second.out, /\[watchdog\] listening on|server launched|adopted the server/, second.out);
  assert.ok(await refused(other), 'the second daemon never listened');

  assert.equal(await tree(ctx.dir), before, 'no file or folder made or changed');
  assert.is(await readFile(join(ctx.dir, 'instances/a/data.json'), 'utf8'), data);
  // The first daemon goes on supervising its server: a check-in after the second one is gone is accepted.
  const gone = Date.now();
  const after = await rs.waitStatus(
    first,
    'a',
    TOKEN,
    'a check-in after the second daemon exited',
    (st) => st.lastCheckinAt !== null && Date.parse(st.lastCheckinAt) > gone,
  );
  assert.is(after.state, 'server.running');
  assert.is(after.pid, ctx.pid, 'the server keeps its pid');
  assert.is(after.restarts, 0);
  assert.is(rs.logLines(first, /server launched/).length, 1, 'launched once');
  assert.equal(await rs.pidsWith(join(ctx.dir, 'instances/a/config.toml')), [ctx.pid], 'exactly one server');
});

test('second-daemon :: a daemon in another working folder with the same instance root is refused too', async (ctx) => {
  const tmp = await tempDir('wd-second-other-');
  ctx.cleanups.push(tmp.cleanup);
  const yaml = ctx.yaml
    .replace(/^Urls: .*$/m, 'Urls: http://127.0.0.1:0')
    .replace('Servers:\n', `Servers:\n  InstanceRoot: ${JSON.stringify(join(ctx.dir, 'instances'))}\n`);
  await writeFile(join(tmp.path, 'appsettings.yml'), yaml);
  const run = await runWatchdog(tmp.path, ['start']);
  assert.is(run.code, 1, run.out);
  assert.ok(run.out.includes(message(ctx.first!, join(ctx.dir, 'instances'))), run.out);
  assert.equal(await readdir(tmp.path), ['appsettings.yml'], 'nothing made in the other folder');
  assert.is((await rs.statusOf(ctx.first!, 'a', TOKEN)).pid, ctx.pid);
});

test('second-daemon :: watchdog import refuses while the daemon holds the folder, and writes nothing', async (ctx) => {
  const db = join(ctx.dir, 'data.db');
  await writeWatchdogDb(db, [{ Key: 'a', Revision: 'imported-9', PersistedToken: 'x', PersistedPid: null }]);
  try {
    const data = await readFile(join(ctx.dir, 'instances/a/data.json'), 'utf8');
    const run = await runWatchdog(ctx.dir, ['import', '--force']);
    assert.is(run.code, 1, run.out);
    assert.ok(run.out.includes(message(ctx.first!, join(ctx.dir, 'instances'))), run.out);
    assert.match(run.out, 'nothing imported');
    assert.is(await readFile(join(ctx.dir, 'instances/a/data.json'), 'utf8'), data, 'data.json unchanged');
  } finally {
    await rm(db, { force: true });
  }
});

test('second-daemon :: SIGKILLed, the daemon leaves no lock: the next one starts at once and adopts the server', async (ctx) => {
  await rs.crash(ctx.first!);
  assert.ok(rs.isAlive(ctx.pid), 'the server survives (PersistServers)');
  // startDaemon fails unless it listens (within its own deadline): no lock left to refuse it.
  const next = await startDaemon(ctx.yaml, { dir: ctx.dir });
  ctx.daemons.push(next);
  assert.not.match(next.log(), /another watchdog/);
  const s = await rs.waitStatus(next, 'a', TOKEN, 'adopted', (st) => rs.running(st) && st.pid === ctx.pid);
  assert.is(s.pid, ctx.pid);
  assert.match(next.log(), 'adopted the server left running by the previous daemon');
  assert.is(rs.logLines(next, /server launched/).length, 0, 'nothing launched');
});

test('second-daemon :: two daemons started at the same moment in one folder: exactly one runs', async (ctx) => {
  const tmp = await tempDir('wd-second-race-');
  ctx.cleanups.push(tmp.cleanup);
  const yaml = testConfig({ instances: [{ key: 'r', port: await freePort(), runCommand: fixture('echo-env.mjs') }] });
  await writeFile(join(tmp.path, 'appsettings.yml'), yaml);
  const procs = [0, 1].map(() =>
    spawn(process.execPath, [join(ROOT, 'bin/watchdog'), 'start'], {
      cwd: tmp.path,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const outs = ['', ''];
  const codes: Array<number | null | undefined> = [undefined, undefined];
  procs.forEach((p, i) => {
    p.stdout.on('data', (d: Buffer) => (outs[i] += d.toString()));
    p.stderr.on('data', (d: Buffer) => (outs[i] += d.toString()));
    p.once('exit', (code) => (codes[i] = code));
  });
  try {
    const loser = await waitFor('one of the two to exit', () => codes.findIndex((c) => c !== undefined) + 1, 15_000);
    const [l, w] = [loser - 1, 2 - loser];
    assert.is(codes[l], 1, outs[l]);
    assert.match(outs[l]!, `another watchdog (pid ${procs[w]!.pid}`);
    await waitFor('the winner to listen', () => /\[watchdog\] listening on/.test(outs[w]!), 15_000);
    // A later step of the winner's start: it launched its server (and so still runs).
    await waitFor('the winner to launch its server', () => /server launched/.test(outs[w]!), 15_000);
    assert.is(codes[w], undefined, `the winner still runs:\n${outs[w]}`);
    assert.is(rs.logLines({ log: () => outs.join('') } as RunningDaemon, /server launched/).length, 1);
  } finally {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
    await waitFor('both gone', () => procs.every((p) => p.exitCode !== null || p.signalCode !== null), 20_000);
  }
});

test.run();
