/**
 * The snapshot taken before an install, through the real daemon: an install that fails after its snapshot removes
 * it and leaves older snapshots alone (`Retention.Backups.Keep: 1`), and one that installs a newer build than the
 * check found names that build, so `rollback --with-data` finds it. `Backups.Sqlite3Path` is a gate in front of the
 * real `sqlite3`: it holds the snapshot until the test has changed what the CDN offers, so the install that follows
 * meets the new manifest at a known moment.
 */
import { execFileSync } from 'node:child_process';
import { access, chmod, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse, stringify } from 'yaml';
import { listBackups } from '../../../src/backups/catalog.ts';
import { runMain } from '../../_support/cli.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, ROOT, tempDir, waitFor } from '../../_support/env.ts';
import { sqliteUnavailable } from '../../backups/_support/sqlite.ts';
import { startCdn } from '../../fixtures/archives/serve.ts';
import { manifestDoc, writeServerBuild } from '../../fixtures/builds/build.ts';
import { instanceDir, manifestConfig, runningBuild, TOKEN } from '../_support/updates.ts';

const unavailable = sqliteUnavailable();
if (unavailable) console.log(`skipping the before-update snapshot e2e test: ${unavailable}`);
const s = suite('e2e updates :: before-update snapshot');
const test = unavailable ? s.skip : s;
const KEY = 'snap';

/** A `sqlite3` that says it began, then waits (at most 30 s) for `go` before it runs the real one. */
async function writeGate(dir: string): Promise<{ program: string; began: string; go: string }> {
  const sqlite3 = execFileSync('sh', ['-c', 'command -v sqlite3'], { encoding: 'utf8' }).trim();
  const began = join(dir, 'began');
  const go = join(dir, 'go');
  const program = join(dir, 'sqlite3-gate');
  await writeFile(
    program,
    `#!/bin/sh\n: > '${began}'\ni=0\nwhile [ ! -e '${go}' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\nexec '${sqlite3}' "$@"\n`,
  );
  await chmod(program, 0o755);
  return { program, began, go };
}

test('before-update snapshot :: a failed install removes its snapshot; a newer build installed is named', async () => {
  const dir = await tempDir('wd-before-update-');
  const cdn = await startCdn();
  let d: RunningDaemon | null = null;
  try {
    const gate = await writeGate(dir.path);
    await writeFile(gate.go, '');
    const schema = { extra: [{ name: 'schema.txt', content: '1\n' }] };
    const build = async (label: string, time: string) => {
      const b = await writeServerBuild(join(dir.path, `${label}.zip`), label, schema);
      cdn.set(`/files/${label}.zip`, { kind: 'file', file: b.path });
      return { key: `build-${label}`, time, url: cdn.url(`/files/${label}.zip`), sha256: b.sha256 };
    };
    const offer = (...builds: Parameters<typeof manifestDoc>[0]) =>
      cdn.set('/manifest', { kind: 'json', body: manifestDoc(builds) });
    const a = await build('A', '2024-05-01T10:00:00Z');
    const b = await build('B', '2024-05-02T10:00:00Z');
    const c = await build('C', '2024-05-04T10:00:00Z');
    // Published after B, and damaged: its download does not match the manifest's hash.
    const broken = { key: 'build-B2', time: '2024-05-03T10:00:00Z', url: b.url, sha256: '0'.repeat(64) };
    offer(a);

    const port = await freePort();
    const config = parse(manifestConfig(KEY, port, cdn.url('/manifest'), 10)) as {
      Servers: { Instances: Record<string, Record<string, unknown>> };
    };
    Object.assign(config.Servers.Instances[KEY] ?? {}, {
      Backups: { Sqlite3Path: gate.program },
      Retention: { Backups: { Keep: 1, KeepDays: 0 } },
    });
    d = await startDaemon(stringify(config), { dir: dir.path });
    const daemon = d;
    const cli = async (...args: string[]) => runMain([...args, '--url', daemon.url, '--token', TOKEN], { cwd: ROOT });
    const snapshots = async () => (await listBackups(join(instanceDir(daemon, KEY), 'backups'))).map((e) => e.id);
    /** Asks for the update, holds its snapshot until `meanwhile` has changed the CDN, then lets it go on. */
    const updateMeeting = async (meanwhile: () => void) => {
      await rm(gate.go);
      await rm(gate.began, { force: true });
      assert.is(await daemon.control(KEY, TOKEN, 'update'), 200);
      await waitFor(
        'the snapshot before the install to begin',
        () =>
          access(gate.began).then(
            () => true,
            () => undefined,
          ),
        30_000,
      );
      meanwhile();
      await writeFile(gate.go, '');
    };

    const onA = await runningBuild(daemon, KEY, port, 'A');
    const manual = await cli('backup', KEY);
    assert.is(manual.code, 0, manual.stderr);
    const [older] = await snapshots();
    assert.ok(older, 'the manual snapshot is there');

    // B is found; while its snapshot is taken, the CDN turns to B2, which fails to install.
    offer(a, b);
    await updateMeeting(() => offer(a, b, broken));
    // The snapshot is settled before the update fails, so the relaunch on A comes after it.
    const stillA = await runningBuild(daemon, KEY, port, 'A', { notPid: onA.status.pid });
    assert.equal(await snapshots(), [older], 'the older snapshot is kept (Keep: 1), the failed install left none');
    assert.match(daemon.log(), /removed the snapshot taken for an install that did not happen/);

    // B is found again; while its snapshot is taken, C is published, and C is what gets installed.
    offer(a, b);
    await updateMeeting(() => offer(a, b, c));
    await runningBuild(daemon, KEY, port, 'C', { notPid: stillA.status.pid });
    const listed = await cli('backups', KEY);
    assert.is(listed.code, 0, listed.stderr);
    const line = listed.stdout.split('\n').find((l) => l.includes('← rollback --with-data'));
    assert.ok(line, `the snapshot is the rollback's:\n${listed.stdout}`);
    assert.match(line, /before-update\s+build-A → build-C/);
    // Counted once installed: Keep 1 keeps it and lets the older one go.
    assert.equal(await snapshots(), [line.split(' ')[0]]);
  } finally {
    await d?.stop();
    await cdn.close();
    await dir.cleanup();
  }
});

s.run();
