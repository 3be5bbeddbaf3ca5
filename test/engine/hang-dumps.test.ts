/**
 * Hang dumps of the real engine (Robust.Server on the .NET runtime): over the runtime's diagnostics IPC, through
 * the runtime's own createdump when the IPC is out of reach, and end to end under the real daemon. One engine
 * serves the direct checks; the daemon runs its own. Skipped, with one line saying why, where the engine cannot run.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readdir, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ENGINE_CHECKIN_SECONDS, ENGINE_SKIP } from '../../bench/peers/robust-engine/bundle.ts';
import { requestDump } from '../../src/process/dotnet-diagnostics.ts';
import { dumpProcess, findDiagnosticsSocket } from '../../src/process/dump.ts';
import { type RunningDaemon, startDaemon } from '../_support/daemon.ts';
import { tempDir, waitFor } from '../_support/env.ts';
import { killGroup } from '../_support/procs.ts';
import { captureLog } from '../_support/recording-logger.ts';
import { waitStatus } from '../e2e/resilience/_support/daemon-crash.ts';
import { prepareEngine, unpackedEngine } from './_support/engine.ts';

const MB = 1024 * 1024;
/** A Normal dump of the idle engine was 26 MB; "tens of MB" with room for another runtime patch or core count. */
const NORMAL_MIN = 5 * MB;
const NORMAL_MAX = 150 * MB;

/** `dotnet-dump` from $DOTNET_DUMP, PATH or the global tools folder (`dotnet tool install -g dotnet-dump`). */
function findDotnetDump(): string | null {
  const candidates = [
    process.env.DOTNET_DUMP ?? '',
    ...(process.env.PATH ?? '').split(delimiter).map((d) => (d ? join(d, 'dotnet-dump') : '')),
    join(homedir(), '.dotnet/tools/dotnet-dump'),
  ];
  return candidates.find((c) => c !== '' && existsSync(c)) ?? null;
}
const DOTNET_DUMP = findDotnetDump();

const test = suite('engine :: hang dumps of the real engine');
const it = ENGINE_SKIP ? test.skip : test;
const withTool = ENGINE_SKIP || !DOTNET_DUMP ? test.skip : test;
if (!ENGINE_SKIP && !DOTNET_DUMP)
  console.log('engine hang dumps: the dotnet-dump check is skipped: no dotnet-dump installed');

const state: {
  dir: string;
  cleanup: () => Promise<void>;
  engine: ChildProcess | null;
  socket: string;
  normal: string;
  daemons: RunningDaemon[];
  pids: Set<number>;
} = { dir: '', cleanup: async () => {}, engine: null, socket: '', normal: '', daemons: [], pids: new Set() };

/** Fails unless `file` is an ELF core file (e_type ET_CORE); resolves its size. */
async function assertCore(file: string): Promise<number> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(18);
    await fh.read(head, 0, 18, 0);
    assert.equal([...head.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46], `${file} is an ELF file`);
    assert.is(head.readUInt16LE(16), 4, `${file} is a core file (ET_CORE)`);
  } finally {
    await fh.close();
  }
  return (await stat(file)).size;
}

/** An instance folder with its config.toml (free TCP status and UDP game ports), as the engine suites make it. */
async function instanceDir(root: string, key: string): Promise<{ dir: string; statusPort: number }> {
  const { statusPort } = await prepareEngine(root, key);
  return { dir: join(root, 'instances', key), statusPort };
}

test.before(async () => {
  if (ENGINE_SKIP) return;
  const tmp = await tempDir('wd-engine-dumps-');
  state.dir = tmp.path;
  state.cleanup = tmp.cleanup;
  const { program } = await unpackedEngine();
  const inst = await instanceDir(tmp.path, 'direct');
  // Launched as the watchdog would, less the check-in settings: these checks dump it directly.
  const engine = spawn(
    program,
    ['--config-file', join(inst.dir, 'config.toml'), '--data-dir', join(inst.dir, 'data')],
    {
      cwd: inst.dir,
      stdio: 'ignore',
      detached: true,
    },
  );
  state.engine = engine;
  if (engine.pid) state.pids.add(engine.pid);
  const pid = engine.pid ?? 0;
  await waitFor(
    'the engine to answer /status',
    async () => (await fetch(`http://127.0.0.1:${inst.statusPort}/status`, { signal: AbortSignal.timeout(2000) })).ok,
    60_000,
    200,
  );
  state.socket = await waitFor('its diagnostics socket', () => findDiagnosticsSocket(pid), 10_000, 100);
});

test.after(async () => {
  for (const d of state.daemons) await d.stop().catch(() => null);
  for (const pid of state.pids) killGroup(pid);
  await state.cleanup();
});

it('hang-dumps :: the runtime writes a Normal dump over its diagnostics IPC: an ELF core of tens of MB', async () => {
  state.normal = join(state.dir, 'normal.core');
  const r = await requestDump(state.socket, state.normal, 'Normal', 120_000);
  assert.equal(r, { ok: true, command: 3 }, 'GenerateCoreDump3 accepted by a .NET 10 runtime');
  const size = await assertCore(state.normal);
  assert.ok(size > NORMAL_MIN && size < NORMAL_MAX, `a Normal dump of ${(size / MB).toFixed(1)} MB`);
});

it('hang-dumps :: a Full dump holds the whole heap: several times the size of a Normal one', async () => {
  const full = join(state.dir, 'full.core');
  const r = await requestDump(state.socket, full, 'Full', 120_000);
  assert.ok(r.ok, JSON.stringify(r));
  const size = await assertCore(full);
  const normal = (await stat(state.normal)).size;
  assert.ok(size > 4 * normal, `Full ${(size / MB).toFixed(0)} MB vs Normal ${(normal / MB).toFixed(0)} MB`);
  await rm(full, { force: true }); // hundreds of MB
});

it('hang-dumps :: a refused request says why, in the runtime own words', async () => {
  const r = await requestDump(state.socket, join(state.dir, 'no/such/folder/x.core'), 'Normal', 120_000);
  assert.is(r.ok, false);
  assert.match(!r.ok ? r.reason : '', /Could not create output file.*HRESULT 0x[0-9A-F]{8}/s);
});

withTool('hang-dumps :: dotnet-dump reads the Normal dump: the managed threads are there', async () => {
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      DOTNET_DUMP ?? 'dotnet-dump',
      ['analyze', state.normal, '-c', 'clrthreads', '-c', 'exit'],
      { timeout: 120_000, maxBuffer: 4 * MB },
      (err, stdout, stderr) =>
        err ? reject(new Error(`dotnet-dump failed: ${stderr}`, { cause: err })) : resolve(stdout),
    ),
  );
  const threads = Number(/ThreadCount:\s+(\d+)/.exec(out)?.[1] ?? 0);
  assert.ok(threads >= 2, `clrthreads lists the managed threads:\n${out}`);
  assert.match(out, /\(Finalizer\)/);
});

it('hang-dumps :: without its socket, the createdump of the runtime it loaded (via libcoreclr.so) writes the dump', async () => {
  const hidden = `${state.socket}.hidden`;
  await rename(state.socket, hidden); // the IPC out of reach, as with DOTNET_EnableDiagnostics=0
  try {
    const log = captureLog();
    const { program } = await unpackedEngine();
    const file = await dumpProcess(state.engine?.pid ?? 0, {
      dumpsDir: join(state.dir, 'fallback-dumps'),
      type: 'Normal',
      timeoutMs: 120_000,
      program, // the bundle ships no createdump beside it
      log,
      searchPath: '', // nor is one on PATH: only the runtime's own can be found
    });
    assert.ok(file, log.lines.join('\n'));
    const line = log.lines.find((l) => l.includes('dump written')) ?? '';
    assert.match(line, /"method":"createdump"/);
    const size = await assertCore(file ?? '');
    assert.ok(size > NORMAL_MIN && size < NORMAL_MAX, `a Normal dump of ${(size / MB).toFixed(1)} MB`);
  } finally {
    await rename(hidden, state.socket);
  }
});

it('hang-dumps :: a hang under the daemon (DumpOnTimeout, Normal) leaves one dump of tens of MB, taken over the IPC', async () => {
  const { program } = await unpackedEngine();
  const dir = join(state.dir, 'daemon');
  const inst = await instanceDir(dir, 'real');
  const yaml = [
    'Urls: http://127.0.0.1:0',
    'Process:',
    '  PersistServers: false',
    'Timing:',
    '  ShutdownRequestSeconds: 2',
    '  ShutdownExitSeconds: 5',
    '  BackoffInitialSeconds: 0.3',
    '  BackoffMaxSeconds: 1',
    '  DumpTimeoutSeconds: 120',
    'Servers:',
    '  Instances:',
    '    real:',
    '      ApiToken: tok',
    `      ApiPort: ${inst.statusPort}`,
    `      RunCommand: ${JSON.stringify(program)}`,
    // Above the engine's 15 s check-in period, as it must be: with 5 s the relaunched engine was a hang again at
    // once, before its first check-in on a busy machine, and that startup hang was dumped too (seen: two dumps 12 s
    // apart, the second found by a folder listing taken after the relaunch).
    `      TimeoutSeconds: ${ENGINE_CHECKIN_SECONDS + 5}`,
    '      DumpOnTimeout: true',
    '      TimeoutDumpType: Normal',
    '',
  ].join('\n');
  const d = await startDaemon(yaml, { dir });
  state.daemons.push(d);
  const first = await waitStatus(
    d,
    'real',
    'tok',
    'server.running',
    (s) => s.state === 'server.running' && s.pid !== null,
    60_000,
  );
  const pid = first.pid ?? 0;
  state.pids.add(pid);
  process.kill(pid, 'SIGSTOP'); // the hang
  await waitFor(
    'the dump of the hung engine',
    () => /\[watchdog:real\] (dump written|no dump taken)/.test(d.log()),
    120_000,
    200,
  );
  // Read as soon as the hang's dump is written: what the folder holds then is what this hang left. (A relaunched
  // engine that does not check in within TimeoutSeconds, as on a busy machine, is a startup hang of its own, and
  // its first one is dumped too: a later dump of another pid.)
  const dumps = join(inst.dir, 'dumps');
  const names = await readdir(dumps);
  const written = d
    .log()
    .split('\n')
    .filter((l) => l.includes('[watchdog:real] dump written'));
  assert.is(written.length, 1, `one dump written:\n${written.join('\n')}`);
  const line = written[0] ?? '';
  assert.match(line, new RegExp(`pid=${pid}\\b`), 'of the hung engine');
  assert.match(line, /method=diagnostics-ipc/, 'taken by the runtime over its diagnostics socket');
  assert.match(line, /type=Normal/);
  assert.match(d.log(), /resumed it \(SIGCONT\)/, 'the stopped engine was resumed to answer');
  assert.is(names.length, 1, `one dump: ${names.join(', ')}`);
  assert.match(names[0] ?? '', /^dump_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d$/);
  assert.ok(line.includes(`file=${join(dumps, names[0] ?? '')} `), 'the file the log names');
  const next = await waitStatus(d, 'real', 'tok', 'relaunched', (s) => s.pid !== null && s.pid !== pid, 60_000);
  state.pids.add(next.pid ?? 0);
  const size = await assertCore(join(dumps, names[0] ?? ''));
  assert.ok(size > NORMAL_MIN && size < NORMAL_MAX, `a Normal dump of ${(size / MB).toFixed(1)} MB`);
  assert.is((await stat(join(dumps, names[0] ?? ''))).mode & 0o777, 0o600);
  assert.is(await d.stop(), 0);
});

test.run();
