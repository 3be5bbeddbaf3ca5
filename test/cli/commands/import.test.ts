import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, readlink, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../../_support/cli.ts';
import { testConfig } from '../../_support/config.ts';
import { tempDir } from '../../_support/env.ts';
import { writeWatchdogDb } from '../../fixtures/watchdog-db/build.ts';

/**
 * `watchdog import` as a real process in a temp folder: a data.db made with the real watchdog's schema, one
 * instance whose persisted pid is its program running (a copy of sleep as `bin/Robust.Server`), one whose pid is
 * an unrelated `sleep`, one whose pid is gone, one with a data.json of ours already.
 */
interface Ctx {
  cwd: string;
  procs: ChildProcess[];
  cleanup: () => Promise<void>;
  running: number;
  unrelated: number;
}
const test = suite<Ctx>('watchdog import', { cwd: '', procs: [], cleanup: async () => {}, running: 0, unrelated: 0 });

function start(ctx: Ctx, program: string, args: string[]): number {
  const proc = spawn(program, args, { stdio: 'ignore' });
  ctx.procs.push(proc);
  if (proc.pid === undefined) throw new Error(`could not start ${program}`);
  return proc.pid;
}

test.before.each(async (ctx) => {
  const t = await tempDir('wd-cli-import-');
  ctx.cwd = t.path;
  ctx.cleanup = t.cleanup;
  ctx.procs = [];
  const program = join(t.path, 'instances/alpha/bin/Robust.Server');
  await mkdir(join(t.path, 'instances/alpha/bin'), { recursive: true });
  await copyFile('/bin/sleep', program);
  // Both started before the CLI runs, as servers an old watchdog left behind are.
  ctx.running = start(ctx, program, ['60', '1']);
  ctx.unrelated = start(ctx, 'sleep', ['60']);
  await writeFile(
    join(t.path, 'appsettings.yml'),
    testConfig({
      persist: true,
      instances: [
        { key: 'alpha', port: 4201, runCommand: 'bin/Robust.Server' },
        { key: 'beta', port: 4202, runCommand: 'bin/Robust.Server' },
        { key: 'gamma', port: 4203, runCommand: 'bin/Robust.Server' },
        { key: 'delta', port: 4204, runCommand: 'bin/Robust.Server' },
        { key: 'epsilon', port: 4205, runCommand: 'bin/Robust.Server' },
      ],
    }),
  );
  await writeWatchdogDb(join(t.path, 'data.db'), [
    { Key: 'alpha', Revision: '1.0.0', PersistedToken: 'tok-alpha', PersistedPid: ctx.running },
    { Key: 'beta', Revision: '2.0.0', PersistedToken: 'tok-beta', PersistedPid: ctx.unrelated },
    {
      Key: 'gamma',
      Revision: null,
      PersistedToken: 'tok-gamma',
      PersistedPid: 999_999_999,
      PersistedSystemdUnit: 'ss14-gamma.service',
    },
    { Key: 'delta', Revision: '4.0.0' },
    { Key: 'retired', Revision: '0.1' },
  ]);
  await mkdir(join(t.path, 'instances/delta'), { recursive: true });
  await writeFile(
    join(t.path, 'instances/delta/data.json'),
    JSON.stringify({ version: 1, updateType: null, revision: 'mine', launch: null }),
  );
});
test.after.each(async (ctx) => {
  for (const p of ctx.procs) p.kill('SIGKILL');
  await ctx.cleanup();
});

const dataJson = async (cwd: string, key: string): Promise<Record<string, unknown> | null> =>
  readFile(join(cwd, 'instances', key, 'data.json'), 'utf8').then(
    (t) => JSON.parse(t) as Record<string, unknown>,
    () => null,
  );

test('import :: --dry-run prints what it found per instance and writes nothing', async (ctx) => {
  const db = join(ctx.cwd, 'data.db');
  const old = new Date('2022-02-02T00:00:00Z');
  await utimes(db, old, old);
  const bytes = await readFile(db);
  const sleepExe = await readlink(`/proc/${ctx.unrelated}/exe`);
  const r = await runCli(['import', '--dry-run'], { cwd: ctx.cwd });
  assert.is(r.code, 0, r.stderr);
  assert.is(
    r.stdout,
    [
      `data file: ${db} (5 entries)`,
      `alpha: revision 1.0.0; pid ${ctx.running} running, would be adopted at the daemon's next start`,
      `beta: revision 2.0.0; pid ${ctx.unrelated} not adopted: it runs ${sleepExe}, not the instance's program ${join(ctx.cwd, 'instances/beta/bin/Robust.Server')}`,
      'gamma: revision (none); pid 999999999 not adopted: no process has that pid any more',
      "  the real watchdog ran this server as systemd unit ss14-gamma.service, which is not adopted (Process.Mode Systemd is not supported); stop it (systemctl stop ss14-gamma.service) if it still runs, or it keeps the server's port",
      'delta: skipped, instances/delta/data.json exists (--force replaces it)',
      'epsilon: not in the data file',
      'not configured here, not imported: retired',
      'dry run: nothing written',
      '',
    ].join('\n'),
  );
  for (const key of ['alpha', 'beta', 'gamma', 'epsilon'])
    assert.is(await dataJson(ctx.cwd, key), null, `${key}: no data.json`);
  assert.equal(await readdir(join(ctx.cwd, 'instances')), ['alpha', 'delta'], 'no instance folder created');
  assert.is((await dataJson(ctx.cwd, 'delta'))?.revision, 'mine');
  assert.ok(bytes.equals(await readFile(db)), 'data.db bytes unchanged');
  assert.is((await stat(db)).mtimeMs, old.getTime(), 'data.db mtime unchanged');
});

test("import :: without --dry-run it writes data.json (the running server's launch record with the persisted token); a second run skips them", async (ctx) => {
  const r = await runCli(['import'], { cwd: ctx.cwd });
  assert.is(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    `alpha: revision 1.0.0; pid ${ctx.running} running, will be adopted at the daemon's next start`,
  );
  const alpha = await dataJson(ctx.cwd, 'alpha');
  assert.is(alpha?.revision, '1.0.0');
  const launch = alpha?.launch as { pid: number; secret: string; program: string; args: string[] } | null;
  assert.equal(
    [launch?.pid, launch?.secret, launch?.program, launch?.args],
    [ctx.running, 'tok-alpha', join(ctx.cwd, 'instances/alpha/bin/Robust.Server'), ['60', '1']],
  );
  assert.equal(await dataJson(ctx.cwd, 'beta'), {
    version: 1,
    updateType: null,
    revision: '2.0.0',
    previousRevision: null,
    launch: null,
    stopped: null,
  });
  assert.is((await dataJson(ctx.cwd, 'gamma'))?.revision, null);
  assert.is((await dataJson(ctx.cwd, 'delta'))?.revision, 'mine', 'an existing data.json is left alone');
  assert.is(await dataJson(ctx.cwd, 'epsilon'), null);

  const again = await runCli(['import'], { cwd: ctx.cwd });
  assert.is(again.code, 0, again.stderr);
  assert.equal(again.stdout.split('\n').filter((l) => l.includes('skipped')).length, 4, again.stdout);
  const forced = await runCli(['import', '--force', '--dry-run'], { cwd: ctx.cwd });
  assert.match(forced.stdout, 'delta: revision 4.0.0; no server pid');
});

test('import :: PersistServers off: the running server would be shut down before a new launch', async (ctx) => {
  const yaml = (await readFile(join(ctx.cwd, 'appsettings.yml'), 'utf8')).replace(
    'PersistServers: true',
    'PersistServers: false',
  );
  await writeFile(join(ctx.cwd, 'appsettings.yml'), yaml);
  const r = await runCli(['import', '--dry-run'], { cwd: ctx.cwd });
  assert.match(
    r.stdout,
    `alpha: revision 1.0.0; pid ${ctx.running} running, would be shut down gracefully at the daemon's next start (Process.PersistServers is off)`,
  );
});

test('import :: a data file that is not SQLite, or none → exit 1 naming it; bad options → exit 2', async (ctx) => {
  const db = join(ctx.cwd, 'data.db');
  await writeFile(db, 'definitely not sqlite');
  let r = await runCli(['import'], { cwd: ctx.cwd });
  assert.is(r.code, 1);
  assert.match(r.stderr, `${db} is not an SQLite database`);
  assert.is(await dataJson(ctx.cwd, 'alpha'), null);
  const yaml = await readFile(join(ctx.cwd, 'appsettings.yml'), 'utf8');
  await writeFile(join(ctx.cwd, 'appsettings.yml'), `${yaml}Data:\n  File: elsewhere.db\n`);
  r = await runCli(['import'], { cwd: ctx.cwd });
  assert.is(r.code, 1);
  assert.match(r.stderr, `no data file at ${join(ctx.cwd, 'elsewhere.db')}`);
  r = await runCli(['import', '--bogus'], { cwd: ctx.cwd });
  assert.is(r.code, 2);
  assert.match(r.stderr, 'usage: watchdog import');
});

test.run();
