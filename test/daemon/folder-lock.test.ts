import { execFileSync } from 'node:child_process';
import { mkdir, realpath, rm, rmdir, stat, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import {
  canonicalPath,
  describeHolder,
  type FolderLock,
  FolderLockedError,
  lockFolders,
  lockNames,
} from '../../src/daemon/folder-lock.ts';
import { tempSuite, within } from '../_support/env.ts';

const test = tempSuite<{ locks: FolderLock[] }>('daemon :: folder lock', {
  prefix: 'wd-lock-',
  ctx: { locks: [] },
  after: async (ctx) => {
    for (const l of ctx.locks.splice(0)) await l.release();
  },
});

async function refusal(folders: string[], answerTimeoutMs?: number): Promise<FolderLockedError> {
  try {
    const lock = await lockFolders(folders, { command: 'start', answerTimeoutMs });
    await lock.release();
  } catch (err) {
    if (err instanceof FolderLockedError) return err;
    throw err;
  }
  throw new Error(`${folders.join(', ')} was not refused`);
}

test('folder lock :: a second lock on the folder is refused with the holder pid and URLs; release frees it', async (ctx) => {
  const root = join(ctx.dir, 'instances');
  const first = await lockFolders([root, ctx.dir], { command: 'start' });
  ctx.locks.push(first);
  assert.is(first.mechanism, 'abstract-socket');
  const starting = await refusal([root]);
  assert.equal(starting.holder, { pid: process.pid, urls: [], command: 'start' });
  assert.match(starting.message, `(pid ${process.pid}, still starting) is running in ${await canonicalPath(root)}`);
  first.announce(['http://127.0.0.1:5000', 'http://[::1]:5000']);
  const err = await refusal([join(ctx.dir, 'other'), ctx.dir]);
  assert.is(
    err.message.split(';')[0],
    `another watchdog (pid ${process.pid}, listening on http://127.0.0.1:5000 and http://[::1]:5000) is running in ${ctx.dir}`,
  );
  await first.release();
  const again = await lockFolders([root, ctx.dir], { command: 'start' });
  ctx.locks.push(again);
});

test('folder lock :: the same folder twice in one list (InstanceRoot ".") does not refuse itself', async (ctx) => {
  ctx.locks.push(await lockFolders([ctx.dir, ctx.dir], { command: 'start' }));
  await refusal([ctx.dir]);
});

test('folder lock :: a symlink to a locked folder meets the same lock, even before the folder exists', async (ctx) => {
  const real = join(ctx.dir, 'real');
  await mkdir(real);
  await symlink(real, join(ctx.dir, 'link'));
  ctx.locks.push(await lockFolders([join(real, 'instances')], { command: 'start' }));
  const err = await refusal([join(ctx.dir, 'link', 'instances')]);
  assert.is(err.folder, join(ctx.dir, 'link', 'instances'));
  assert.equal(await lockNames(join(ctx.dir, 'link/instances')), await lockNames(join(real, 'instances')));
});

test("folder lock :: a new folder given a removed locked folder's inode is not locked by it", async (ctx) => {
  // A daemon left running in a folder that was removed still holds that folder's names.
  const gone = join(ctx.dir, 'gone');
  await mkdir(gone);
  const { ino } = await stat(gone);
  ctx.locks.push(await lockFolders([gone], { command: 'start' }));
  await rm(gone, { recursive: true });
  // ext4 hands a freed inode to the next folder made; a few tries at most.
  const fresh = join(ctx.dir, 'fresh');
  let reused = false;
  for (let i = 0; i < 50 && !reused; i++) {
    await mkdir(fresh);
    reused = (await stat(fresh)).ino === ino;
    if (!reused) await rmdir(fresh);
  }
  // Another process on a busy machine can take the freed inode first: then there is nothing to test here, which is
  // said rather than failed (seen once in CI, files running beside this one).
  if (!reused) {
    console.log(`skipped: the file system did not hand inode ${ino} to the new folder (taken by another, or not ext4)`);
    return;
  }
  ctx.locks.push(await lockFolders([fresh], { command: 'start' }));
});

test('folder lock :: a holder that does not answer is reported without a pid, within the wait', async (ctx) => {
  const [name] = await lockNames(ctx.dir);
  const silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen({ path: name }, () => r()));
  try {
    // The holder never answers: without the 300 ms answer bound this would wait for ever (10 s catches that).
    const err = await within(10_000, 'a refusal from a silent holder', refusal([ctx.dir], 300));
    assert.is(err.holder.pid, null);
    assert.match(err.message, 'pid unknown: it did not answer');
  } finally {
    silent.close();
  }
});

test('folder lock :: what a stranger answers on the name is shown without control characters', async (ctx) => {
  const [name] = await lockNames(ctx.dir);
  const squatter = createServer((sock) =>
    sock.end(JSON.stringify({ pid: 7, urls: ['http://x\u001b[2J'], command: 'start' })),
  );
  await new Promise<void>((r) => squatter.listen({ path: name }, () => r()));
  try {
    const err = await refusal([ctx.dir]);
    assert.equal(err.holder, { pid: 7, urls: ['http://x?[2J'], command: 'start' });
    assert.match(err.message, `another watchdog (pid 7, listening on http://x?[2J) is running in ${ctx.dir}`);
  } finally {
    squatter.close();
  }
  assert.match(describeHolder('/srv', { pid: 7, urls: [], command: 'import' }), 'running `watchdog import`');
});

test('folder lock :: where there is no abstract socket namespace, nothing is locked and the caller is told', async (ctx) => {
  const a = await lockFolders([ctx.dir], { command: 'start', platform: 'darwin' });
  const b = await lockFolders([ctx.dir], { command: 'start', platform: 'darwin' });
  assert.is(a.mechanism, 'none');
  assert.is(b.mechanism, 'none');
  assert.is(a.unavailable, 'darwin has no abstract Unix sockets');
  await a.release();
  await b.release();
});

let bindMount: string | null = null;
try {
  execFileSync('mount', ['--version'], { stdio: 'ignore' });
  bindMount = process.getuid?.() === 0 ? null : 'bind mounts need root';
} catch {
  bindMount = 'no mount command';
}
const bindTest = bindMount === null ? test : test.skip;
if (bindMount !== null) console.log(`folder lock :: bind-mount test skipped: ${bindMount}`);

bindTest('folder lock :: a bind mount of a root made after the lock was taken meets it once refreshed', async (ctx) => {
  const root = join(ctx.dir, 'instances');
  const lock = await lockFolders([root], { command: 'start' });
  ctx.locks.push(lock);
  await mkdir(root);
  await lock.refresh();
  const alias = join(ctx.dir, 'alias');
  await mkdir(alias);
  execFileSync('mount', ['--bind', root, alias], { stdio: 'pipe' });
  try {
    assert.is.not(await canonicalPath(alias), await realpath(root), 'a different path');
    await refusal([alias]);
  } finally {
    execFileSync('umount', [alias], { stdio: 'pipe' });
  }
});

test.run();
