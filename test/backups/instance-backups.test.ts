/**
 * One instance's snapshots end to end below the daemon: retention after each snapshot, `Backups.AfterCommand` run
 * as a real process with the snapshot in its environment, failures reported, and the snapshot taken before an
 * install found again by the revision it preceded.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import {
  type AfterCommandResult,
  type BackupOutcome,
  createInstanceBackups,
  type InstanceBackups,
} from '../../src/backups/instance-backups.ts';
import { BackupsSchema, RetentionSchema } from '../../src/config/sections/backups.ts';
import { waitFor } from '../_support/env.ts';

interface Ctx {
  dir: string;
  outcomes: BackupOutcome[];
  found: BackupOutcome[];
  after: Array<{ id: string; result: AfterCommandResult }>;
}
const test = suite<Ctx>('instance backups', { dir: '', outcomes: [], found: [], after: [] });

test.before.each(async (ctx) => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'wd-backups-'));
  ctx.outcomes = [];
  ctx.found = [];
  ctx.after = [];
  await mkdir(join(ctx.dir, 'data'), { recursive: true });
  await writeFile(join(ctx.dir, 'data', 'save.txt'), 'round 1');
});
test.after.each(async (ctx) => {
  await rm(ctx.dir, { recursive: true, force: true });
});

function backupsOf(ctx: Ctx, backups: unknown, retention: unknown, clock: { t: number }): InstanceBackups {
  return createInstanceBackups({
    key: 'alpha',
    instanceDir: ctx.dir,
    settings: () => ({ backups: v.parse(BackupsSchema, backups), retention: v.parse(RetentionSchema, retention) }),
    reports: {
      taken: (o) => ctx.outcomes.push(o),
      found: (o) => ctx.found.push(o),
      afterCommand: (id, result) => ctx.after.push({ id, result }),
      unreadable: (file, err) => assert.unreachable(`${file}: ${err.message}`),
    },
    now: () => clock.t,
  });
}

/** `n` scheduled snapshots an hour apart on the clock; their ids, oldest first. */
async function takeHourly(b: InstanceBackups, clock: { t: number }, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    clock.t += 3_600_000;
    ids.push((await b.take({ kind: 'scheduled', revision: `r${i}`, quiet: false })).id);
  }
  return ids;
}

test('instance backups :: retention keeps the newest Keep after each snapshot and says what it removed', async (ctx) => {
  const clock = { t: Date.parse('2026-11-01T00:00:00Z') };
  const b = backupsOf(ctx, {}, { Backups: { Keep: 2, KeepDays: 0 } }, clock);
  const ids = await takeHourly(b, clock, 4);
  assert.equal(
    (await b.list()).map((e) => e.id),
    [ids[3], ids[2]],
  );
  assert.equal(
    ctx.outcomes.map((o) => (o.ok ? o.removed : null)),
    [[], [], [ids[0]], [ids[1]]],
  );
  await b.close();
});

test('instance backups :: AfterCommand runs with the snapshot in its environment, its status reported', async (ctx) => {
  const seen = join(ctx.dir, 'seen.txt');
  const script = `printf '%s\\n%s\\n%s\\n' "$WATCHDOG_BACKUP_PATH" "$WATCHDOG_BACKUP_ID" "$WATCHDOG_INSTANCE" > ${seen}; echo uploaded; exit 3`;
  const b = backupsOf(ctx, { AfterCommand: ['sh', '-c', script] }, {}, { t: Date.now() });
  const m = await b.take({ kind: 'manual', revision: 'r1', quiet: false });
  await waitFor('AfterCommand reported', () => ctx.after.length === 1);
  assert.equal(ctx.after[0], { id: m.id, result: { ok: false, status: 'exit code 3', output: 'uploaded' } });
  const [path, id, instance] = (await readFile(seen, 'utf8')).trim().split('\n');
  assert.is(path, join(ctx.dir, 'backups', `${m.id}.tar.gz`));
  assert.is(id, m.id);
  assert.is(instance, 'alpha');
  await b.close();
});

test('instance backups :: an AfterCommand over its time is stopped and says so', async (ctx) => {
  const b = backupsOf(ctx, { AfterCommand: ['sleep', '30'], AfterCommandTimeoutSeconds: 0.3 }, {}, { t: Date.now() });
  await b.take({ kind: 'manual', revision: 'r1', quiet: false });
  await waitFor('AfterCommand reported', () => ctx.after.length === 1);
  assert.is(ctx.after[0]?.result.ok, false);
  assert.match(ctx.after[0]?.result.status ?? '', /took longer than 0.3 s and was stopped/);
  await b.close();
});

test('instance backups :: a failed snapshot is reported and rejects; the one before an install is found by revision', async (ctx) => {
  const b = backupsOf(ctx, { SpaceMarginMegabytes: 1e15 }, {}, { t: Date.now() });
  const err = await b
    .take({ kind: 'before-update', revision: 'r1', revisionAfter: 'r2', quiet: true })
    .catch((e: unknown) => e);
  assert.instance(err, Error);
  assert.equal(
    ctx.outcomes.map((o) => [o.ok, o.ok ? '' : o.reason]),
    [[false, 'space']],
  );
  assert.is(b.last?.ok, false);

  const ok = backupsOf(ctx, {}, {}, { t: Date.now() });
  const m = await ok.take({ kind: 'before-update', revision: 'r1', revisionAfter: 'r2', quiet: true });
  assert.is((await ok.takenBefore('r2', 'r1'))?.id, m.id);
  assert.is(await ok.takenBefore('r1', 'r0'), null);
  // After a rollback to r1, bin.prev holds r2: a snapshot taken before r2 replaced r1 is not r1's way back to r2.
  assert.is(await ok.takenBefore('r2', 'r3'), null);
  await ok.close();
  await b.close();
});

test('instance backups :: a before-update snapshot counts only once its install succeeded; a failed one goes', async (ctx) => {
  const clock = { t: Date.parse('2026-11-01T00:00:00Z') };
  const b = backupsOf(ctx, {}, { Backups: { Keep: 2, KeepDays: 0 } }, clock);
  const kept = (await takeHourly(b, clock, 2)).reverse();
  const ids = async () => (await b.list()).map((e) => e.id);
  // A build that fails to install at every check: each snapshot taken for it goes, and none of them rotated the
  // older two away (Keep 2), not even while it was on disk beside them.
  for (let i = 0; i < 3; i++) {
    clock.t += 3_600_000;
    const before = await b.beforeInstall({ revision: 'r1', revisionAfter: 'r2' });
    assert.equal(await ids(), [before.id, ...kept], 'during the install');
    await before.notInstalled();
    assert.equal(await ids(), kept, 'after the failed install');
    assert.is(b.last?.ok && b.last.id, kept[0], "the status's last backup is one still there");
  }
  // A scheduled snapshot during an install leaves the install's snapshot out of its count.
  clock.t += 3_600_000;
  const before = await b.beforeInstall({ revision: 'r1', revisionAfter: 'r2' });
  clock.t += 60_000;
  const during = await b.take({ kind: 'scheduled', revision: 'r1', quiet: false });
  assert.equal(await ids(), [during.id, before.id, kept[0]]);
  // Installed: now it counts, and retention runs.
  assert.equal(await before.installed('r2'), [kept[0]]);
  assert.equal(await ids(), [during.id, before.id]);
  await b.close();
});

test('instance backups :: the snapshot before an install names the build installed, not the one the check found', async (ctx) => {
  const b = backupsOf(ctx, {}, {}, { t: Date.now() });
  const before = await b.beforeInstall({ revision: 'r1', revisionAfter: 'r2' });
  // A newer build was published between the check and the install.
  await before.installed('r3');
  assert.is((await b.takenBefore('r3', 'r1'))?.id, before.id);
  assert.is(await b.takenBefore('r2', 'r1'), null);
  const [entry] = await b.list();
  assert.is(entry?.revisionAfter, 'r3');
  assert.is(entry?.revision, 'r1');
  // The manifest was replaced whole: no temporary file is left beside it.
  assert.equal(
    (await readdir(join(ctx.dir, 'backups'))).filter((n) => !/\.(json|tar\.gz)$/.test(n)),
    [],
  );
  await b.close();
});

test('instance backups :: at start the newest snapshot on disk is the last one, found and not taken again', async (ctx) => {
  const clock = { t: Date.parse('2026-11-01T00:00:00Z') };
  const before = backupsOf(ctx, {}, {}, clock);
  assert.equal(await before.start(), []);
  assert.is(ctx.found.length, 0, 'nothing on disk, nothing found');
  await before.take({ kind: 'scheduled', revision: 'r1', quiet: false });
  clock.t += 60_000;
  const newest = await before.take({ kind: 'manual', revision: 'r1', quiet: false });
  await before.close();

  // The next daemon.
  ctx.outcomes = [];
  const after = backupsOf(ctx, {}, {}, clock);
  await after.start();
  const expected = {
    ok: true,
    kind: 'manual',
    id: newest.id,
    bytes: newest.bytes,
    archiveBytes: newest.archiveBytes,
    removed: [],
    at: Date.parse(newest.takenAt),
  };
  assert.equal(ctx.found, [expected]);
  assert.equal(after.last, expected);
  assert.equal(ctx.outcomes, [], 'not reported as taken');
  await after.close();
});

test.run();
