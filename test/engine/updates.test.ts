import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import type { RunningDaemon } from '../_support/daemon.ts';
import { waitFor } from '../_support/env.ts';
import { startCdn, type Cdn } from '../fixtures/archives/serve.ts';
import { manifestDoc, type BuiltArchive, type ManifestBuild } from '../fixtures/builds/build.ts';
import { builtLabel, dataJson, instanceDir } from '../e2e/updates/_support.ts';
import {
  type EngineInstance,
  engineSuite,
  engineYaml,
  gone,
  packEngineBuild,
  prepareEngine,
  running,
  serverLog,
  TOKEN,
  unpackedEngine,
} from './_engine.ts';

/**
 * Updates with the real engine. `UpdateType: Dummy` counts the revision up; `UpdateType: Manifest` installs the
 * engine bundle itself, packed as a tar.gz build and served from a loopback CDN, into the instance's bin/ and runs
 * it from there (`RunCommand` relative to the instance: the engine finds its roots from its own binary).
 *
 * An update is announced with POST /update. The engine acknowledges it but has no game to end a round, so it never
 * leaves: the update stays pending until a restart, which installs it before the next launch. That is what the
 * real watchdog does with this engine too.
 */

const RUN_COMMAND = 'bin/RobustToolbox/bin/Server/Robust.Server';

interface Ctx {
  cdn: Cdn;
  dummy: EngineInstance;
  man: EngineInstance;
  a: BuiltArchive;
  b: BuiltArchive;
  builds: ManifestBuild[];
}

const test = engineSuite<Ctx>('engine :: updates of the real engine (Dummy, Manifest)', {
  ctx: {} as Ctx,
  config: async (ctx) => {
    const bundle = await unpackedEngine();
    ctx.cdn = await startCdn();
    [ctx.a, ctx.b] = await Promise.all([
      packEngineBuild(bundle.dir, join(ctx.dir, 'A.tar.gz'), 'A'),
      packEngineBuild(bundle.dir, join(ctx.dir, 'B.tar.gz'), 'B'),
    ]);
    ctx.cdn.set('/files/A.tar.gz', { kind: 'file', file: ctx.a.path });
    ctx.cdn.set('/files/B.tar.gz', { kind: 'file', file: ctx.b.path });
    ctx.builds = [
      { key: 'build-A', time: '2026-01-01T10:00:00Z', url: ctx.cdn.url('/files/A.tar.gz'), sha256: ctx.a.sha256 },
    ];
    ctx.cdn.set('/manifest', { kind: 'json', body: manifestDoc(ctx.builds) });
    ctx.dummy = await prepareEngine(ctx.dir, 'dummy');
    ctx.man = await prepareEngine(ctx.dir, 'man');
    return engineYaml([
      { engine: ctx.dummy, runCommand: bundle.program, more: { UpdateType: 'Dummy' } },
      {
        engine: ctx.man,
        runCommand: RUN_COMMAND,
        more: {
          UpdateType: 'Manifest',
          Updates: { ManifestUrl: ctx.cdn.url('/manifest'), Platform: 'linux-x64', DownloadTimeoutSeconds: 60 },
        },
      },
    ]);
  },
  after: (ctx) => ctx.cdn?.close(),
});

/** Argv[0] of a process, as the kernel has it. */
const program = async (pid: number) => (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0')[0];

/**
 * Asks for an update and checks what the engine does with it: POST /update reaches it (its log), it answers 2xx and
 * stays (same pid, the revision unchanged, the update pending).
 */
async function updateAcknowledged(d: RunningDaemon, dir: string, key: string, pid: number, revision: string) {
  const from = d.log().length;
  const engineFrom = (await serverLog(dir, key)).length;
  assert.is(await d.control(key, TOKEN, 'update'), 200);
  await waitFor(`${key}: the engine told of the update`, async () =>
    /statushost\.http: POST \/update from 127\.0\.0\.1/.test((await serverLog(dir, key)).slice(engineFrom)),
  );
  assert.match(d.log().slice(from), new RegExp(`\\[watchdog:${key}\\] update available`));
  await new Promise((r) => setTimeout(r, 2000));
  const s = await d.status(key, TOKEN);
  assert.is(s.state, 'running');
  assert.is(s.pid, pid, 'the engine stays: nothing in it ends a round');
  assert.is(s.revision, revision, 'nothing installed under a running engine');
  assert.is(s.updatePending, true);
  assert.not.match(d.log().slice(from), /did not accept POST \/update|kill/i);
}

test('Dummy: the engine runs as revision 1', async (ctx) => {
  const s = await running(ctx.daemon!, 'dummy');
  ctx.pids.add(s.pid!);
  assert.is(s.revision, '1');
});

test('Manifest: build A is installed before the first launch and the engine runs from bin/', async (ctx) => {
  const d = ctx.daemon!;
  const s = await running(d, 'man');
  ctx.pids.add(s.pid!);
  assert.is(s.revision, 'build-A');
  assert.is((await dataJson(d, 'man')).revision, 'build-A');
  assert.is(await builtLabel(d, 'man'), 'A');
  assert.is(await program(s.pid!), join(instanceDir(d, 'man'), RUN_COMMAND));
  assert.match(await serverLog(ctx.dir, 'man'), /Server Version 289\.0\.0\.0 -> Ready/);
});

test('Dummy update: acknowledged, pending while the engine runs; a restart installs revision 2', async (ctx) => {
  const d = ctx.daemon!;
  const before = await running(d, 'dummy');
  await updateAcknowledged(d, ctx.dir, 'dummy', before.pid!, '1');
  assert.is(await d.control('dummy', TOKEN, 'restart'), 200);
  const after = await running(d, 'dummy', before.pid!);
  ctx.pids.add(after.pid!);
  assert.ok(gone(before.pid!));
  assert.is(after.revision, '2');
  assert.is(after.updatePending, false);
});

test('Manifest update to B: acknowledged and pending; a restart installs B and runs it', async (ctx) => {
  const d = ctx.daemon!;
  const before = await running(d, 'man');
  ctx.builds.push({
    key: 'build-B',
    time: '2026-01-02T10:00:00Z',
    url: ctx.cdn.url('/files/B.tar.gz'),
    sha256: ctx.b.sha256,
  });
  ctx.cdn.set('/manifest', { kind: 'json', body: manifestDoc(ctx.builds) });
  await updateAcknowledged(d, ctx.dir, 'man', before.pid!, 'build-A');
  assert.is(await d.control('man', TOKEN, 'restart'), 200);
  const after = await running(d, 'man', before.pid!);
  ctx.pids.add(after.pid!);
  assert.ok(gone(before.pid!));
  assert.is(after.revision, 'build-B');
  assert.is(await builtLabel(d, 'man'), 'B');
  assert.is(await builtLabel(d, 'man', 'bin.prev'), 'A');
  const data = await dataJson(d, 'man');
  assert.is(data.revision, 'build-B');
  assert.is(data.previousRevision, 'build-A');
  const log = await serverLog(ctx.dir, 'man');
  assert.match(log.slice(log.lastIndexOf('Server -> Starting')), /Server Version 289\.0\.0\.0 -> Ready/);
});

test.run();
