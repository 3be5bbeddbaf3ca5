import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, readlink, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { describeError } from '../../../src/errors.ts';
import { detectArchiveFormat, extractArchive } from '../../../src/updates/archive/extract.ts';
import { tempSuite } from '../../_support/env.ts';
import { type EntrySpec, sampleBuild, writeRawTar, writeTar, writeZip } from '../../fixtures/archives/build.ts';
import { entryExists, rejects } from '../_support/instance-suite.ts';
import { cutInHalf, tarGzCutInEntry } from './_support/cut-archives.ts';

interface Ctx {
  dir: string;
  dest: string;
}

// Extract two levels down so "outside" is still inside the temp folder and can be checked.
const extractSuite = (name: string) =>
  tempSuite(name, {
    ctx: { dest: '' },
    before: async (ctx) => {
      ctx.dest = join(ctx.dir, 'a', 'dest');
      await mkdir(ctx.dest, { recursive: true });
    },
  });

/** Everything under the temp root except the archive files, to prove nothing landed outside dest. */
async function outsideDest(ctx: Ctx): Promise<string[]> {
  const all = await readdir(ctx.dir, { recursive: true });
  return all.filter((p) => !p.startsWith(join('a', 'dest')) && !/\.(zip|tar|gz)$/.test(p) && p !== 'a');
}

// ---

const good = extractSuite('extract');

const build: EntrySpec[] = [
  ...sampleBuild('A'),
  { name: 'tools/run.sh', content: '#!/bin/sh\n', mode: 0o755 },
  { name: 'latest', symlinkTo: 'Resources/data.txt' },
  { name: 'Resources/up', symlinkTo: '../build.txt' },
];

async function assertBuild(dest: string): Promise<void> {
  assert.is(await readFile(join(dest, 'build.txt'), 'utf8'), 'A');
  assert.is(await readFile(join(dest, 'Resources', 'data.txt'), 'utf8'), 'data of A');
  assert.is((await stat(join(dest, 'tools', 'run.sh'))).mode & 0o777, 0o755);
  assert.is(await readlink(join(dest, 'latest')), 'Resources/data.txt');
  assert.is(await readFile(join(dest, 'Resources', 'up'), 'utf8'), 'A');
}

good('extract :: zip with modes and inner links', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, build);
  assert.is(await detectArchiveFormat(archive), 'zip');
  await extractArchive(archive, ctx.dest);
  await assertBuild(ctx.dest);
  assert.is((await stat(join(ctx.dest, 'build.txt'))).mode & 0o777, 0o644);
});

good('extract :: tar.gz and plain tar', async (ctx) => {
  const gz = join(ctx.dir, 'b.tar.gz');
  await writeTar(gz, build, { gzip: true });
  assert.is(await detectArchiveFormat(gz), 'gzip');
  await extractArchive(gz, ctx.dest);
  await assertBuild(ctx.dest);
  const plain = join(ctx.dir, 'b.tar');
  await writeTar(plain, build);
  assert.is(await detectArchiveFormat(plain), 'tar');
  const other = join(ctx.dir, 'other');
  await mkdir(other);
  await extractArchive(plain, other);
  await assertBuild(other);
});

good('extract :: the format comes from the bytes, not the name', async (ctx) => {
  const lying = join(ctx.dir, 'b.zip');
  await writeTar(lying, sampleBuild('A'), { gzip: true });
  await extractArchive(lying, ctx.dest);
  assert.is(await readFile(join(ctx.dest, 'build.txt'), 'utf8'), 'A');
  const text = join(ctx.dir, 'c.tar.gz');
  await writeFile(text, '<html>not a build</html>'.repeat(30));
  await rejects(extractArchive(text, ctx.dest), /not a zip, tar or tar.gz archive/);
});

good('extract :: a named pipe in place of the download is refused at once, naming it', async (ctx) => {
  // .update/ is in the instance folder: the server can swap the part file for a pipe nobody ever writes to.
  const part = join(ctx.dir, 'download.part');
  if (spawnSync('mkfifo', [part]).status !== 0) return console.log('  (skipped: no mkfifo)');
  const err = await rejects(extractArchive(part, ctx.dest), /cannot read the archive \S+download\.part/);
  assert.match(describeError(err), /download\.part is not a regular file \(a named pipe\)/);
});

good('extract :: an already-cancelled signal stops before writing', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, sampleBuild('A'));
  const ac = new AbortController();
  ac.abort();
  await rejects(extractArchive(archive, ctx.dest, ac.signal), /cancelled/);
  assert.equal(await readdir(ctx.dest), []);
  const tgz = join(ctx.dir, 'b.tar.gz');
  await writeTar(tgz, sampleBuild('A'), { gzip: true });
  await rejects(extractArchive(tgz, ctx.dest, ac.signal), /cancelled/);
});

good('extract :: cancellation mid-extraction stops zip and tar alike', async (ctx) => {
  // Enough entries that extraction is still running when the first files show up (built in memory: quick).
  const names = Array.from({ length: 2000 }, (_, i) => `Resources/d${i % 20}/f${i}.txt`);
  const zip = join(ctx.dir, 'many.zip');
  const tgz = join(ctx.dir, 'many.tar.gz');
  await writeZip(
    zip,
    names.map((name) => ({ name, content: name, store: true })),
  );
  await writeRawTar(
    tgz,
    names.map((path) => ({ path, type: 'File' as const, content: path })),
    { gzip: true },
  );
  for (const archive of [zip, tgz]) {
    const dest = join(ctx.dir, `out-${archive.endsWith('.zip') ? 'zip' : 'tgz'}`);
    await mkdir(dest);
    const ac = new AbortController();
    const started = extractArchive(archive, dest, ac.signal);
    const poll = setInterval(() => {
      readdir(join(dest, 'Resources')).then(
        (names) => names.length > 0 && ac.abort(),
        () => undefined,
      );
    }, 2);
    try {
      await rejects(started, /cancelled/);
    } finally {
      clearInterval(poll);
    }
  }
});

good('extract :: tar: many files, then a hard link and a symlink to the last of them, all intact', async (ctx) => {
  const files = Array.from({ length: 300 }, (_, i) => ({
    path: `d${i % 7}/f${i}.txt`,
    type: 'File' as const,
    content: `file ${i} `.repeat(i),
  }));
  const archive = join(ctx.dir, 'many.tar.gz');
  await writeRawTar(
    archive,
    [
      ...files,
      { path: 'hard.txt', type: 'Link', linkpath: 'd5/f299.txt' },
      { path: 'soft.txt', type: 'SymbolicLink', linkpath: 'd5/f299.txt' },
    ],
    { gzip: true },
  );
  await extractArchive(archive, ctx.dest);
  for (const f of files) assert.is(await readFile(join(ctx.dest, f.path), 'utf8'), f.content, f.path);
  assert.is(await readFile(join(ctx.dest, 'hard.txt'), 'utf8'), files[299]?.content);
  assert.is(
    (await stat(join(ctx.dest, 'hard.txt'))).ino,
    (await stat(join(ctx.dest, 'd5/f299.txt'))).ino,
    'a hard link',
  );
  assert.is(await readlink(join(ctx.dest, 'soft.txt')), 'd5/f299.txt');
});

good('extract :: zip: many files, and a same-name entry later in the archive wins', async (ctx) => {
  const files = Array.from({ length: 300 }, (_, i) => ({
    name: `d${i % 7}/f${i}.txt`,
    content: `file ${i} `.repeat(i),
  }));
  const archive = join(ctx.dir, 'many.zip');
  await writeZip(archive, [...files, { name: 'd0/f0.txt', content: 'replaced' }]);
  await extractArchive(archive, ctx.dest);
  for (const f of files.slice(1)) assert.is(await readFile(join(ctx.dest, f.name), 'utf8'), f.content, f.name);
  assert.is(await readFile(join(ctx.dest, 'd0/f0.txt'), 'utf8'), 'replaced');
});

good(
  'extract :: zip: empty, stored and deflated entries larger than one read chunk come out byte for byte',
  async (ctx) => {
    const big = randomBytes(3 * 1024 * 1024 + 17).toString('base64');
    const archive = join(ctx.dir, 'b.zip');
    await writeZip(archive, [
      { name: 'empty.txt', content: '' },
      { name: 'empty-stored.txt', content: '', store: true },
      { name: 'big-deflated.txt', content: big },
      { name: 'big-stored.txt', content: big, store: true },
    ]);
    await extractArchive(archive, ctx.dest);
    assert.is(await readFile(join(ctx.dest, 'empty.txt'), 'utf8'), '');
    assert.is(await readFile(join(ctx.dest, 'empty-stored.txt'), 'utf8'), '');
    assert.ok((await readFile(join(ctx.dest, 'big-deflated.txt'), 'utf8')) === big, 'deflated entry intact');
    assert.ok((await readFile(join(ctx.dest, 'big-stored.txt'), 'utf8')) === big, 'stored entry intact');
  },
);

good('extract :: tar.gz: an entry larger than one inflate chunk comes out byte for byte', async (ctx) => {
  const big = randomBytes(3 * 1024 * 1024 + 17).toString('base64');
  const archive = join(ctx.dir, 'b.tar.gz');
  await writeTar(
    archive,
    [
      { name: 'big.txt', content: big },
      { name: 'empty.txt', content: '' },
    ],
    { gzip: true },
  );
  await extractArchive(archive, ctx.dest);
  assert.ok((await readFile(join(ctx.dest, 'big.txt'), 'utf8')) === big, 'entry intact');
  assert.is(await readFile(join(ctx.dest, 'empty.txt'), 'utf8'), '');
});

good.run();

// ---

const corrupt = extractSuite('extract corrupt');

corrupt('extract :: a truncated zip is an UpdateError', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, sampleBuild('A'));
  await truncate(archive, (await stat(archive)).size - 30);
  await rejects(extractArchive(archive, ctx.dest), /zip archive is corrupt/);
});

corrupt('extract :: a zip whose data fails its CRC is an UpdateError', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [{ name: 'f.txt', content: 'x'.repeat(4000), store: true }]);
  const data = await readFile(archive);
  data[100] = 0x79; // inside the stored body of the only entry: 'x' becomes 'y', sizes unchanged
  await writeFile(archive, data);
  await rejects(extractArchive(archive, ctx.dest), /"f\.txt" fails its CRC check/);
});

/** Rewrites the uncompressed size the central directory records for the zip's only entry. */
async function recordUncompressedSize(archive: string, size: number): Promise<void> {
  const data = await readFile(archive);
  const at = data.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])); // central directory file header
  assert.ok(at > 0, 'the zip has a central directory');
  data.writeUInt32LE(size, at + 24);
  await writeFile(archive, data);
}

corrupt('extract :: a deflated zip entry larger than its recorded size is refused, not written on', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [{ name: 'f.txt', content: 'x'.repeat(400_000) }]);
  await recordUncompressedSize(archive, 1000);
  await rejects(extractArchive(archive, ctx.dest), /"f\.txt" is larger than its recorded size/);
});

corrupt('extract :: a deflated zip entry shorter than its recorded size is refused', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [{ name: 'f.txt', content: 'x'.repeat(4000) }]);
  await recordUncompressedSize(archive, 4001);
  await rejects(extractArchive(archive, ctx.dest), /"f\.txt" is shorter than its recorded size/);
});

corrupt('extract :: a zip whose deflated data is damaged is an UpdateError', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [{ name: 'f.txt', content: 'x'.repeat(4000) }]);
  const data = await readFile(archive);
  data[100] = (data[100] ?? 0) ^ 0xff;
  await writeFile(archive, data);
  await rejects(extractArchive(archive, ctx.dest), /zip archive is corrupt/);
});

corrupt('extract :: a truncated tar.gz is an UpdateError', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar.gz');
  await writeTar(archive, [...sampleBuild('A'), { name: 'big.bin', content: 'y'.repeat(100_000) }], { gzip: true });
  await cutInHalf(archive);
  await rejects(extractArchive(archive, ctx.dest), /tar archive is corrupt/);
});

corrupt('extract :: a tar.gz cut in the middle of an entry fails instead of waiting forever', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar.gz');
  await tarGzCutInEntry(archive, 150_000);
  await rejects(extractArchive(archive, ctx.dest), /tar archive is corrupt .*unexpected end of file/);
});

corrupt('extract :: a plain tar cut in the middle of an entry is an UpdateError', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar');
  await writeRawTar(archive, [{ path: 'big.bin', type: 'File', content: 'z'.repeat(20_000) }]);
  await truncate(archive, 5_000);
  await rejects(extractArchive(archive, ctx.dest), /tar archive is corrupt .*Truncated input/);
});

corrupt(
  'extract :: a later entry of the same name replaces the earlier one, never writing through a link',
  async (ctx) => {
    const archive = join(ctx.dir, 'b.tar');
    await writeRawTar(archive, [
      { path: 'target.txt', type: 'File', content: 'target' },
      { path: 'f.txt', type: 'File', content: 'first' },
      { path: 'f.txt', type: 'File', content: 'second' },
      { path: 'l', type: 'SymbolicLink', linkpath: 'target.txt' },
      { path: 'l', type: 'File', content: 'replaced the link' },
    ]);
    await extractArchive(archive, ctx.dest);
    assert.is(await readFile(join(ctx.dest, 'f.txt'), 'utf8'), 'second');
    assert.is(await readFile(join(ctx.dest, 'l'), 'utf8'), 'replaced the link');
    assert.is(await readFile(join(ctx.dest, 'target.txt'), 'utf8'), 'target');
    assert.not.ok((await lstat(join(ctx.dest, 'l'))).isSymbolicLink());
  },
);

corrupt('extract :: zip: a later entry of the same name replaces a link instead of writing through it', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [
    { name: 'target.txt', content: 'target' },
    { name: 'l', symlinkTo: 'target.txt' },
    { name: 'l', content: 'replaced the link' },
  ]);
  await extractArchive(archive, ctx.dest);
  assert.is(await readFile(join(ctx.dest, 'l'), 'utf8'), 'replaced the link');
  assert.is(await readFile(join(ctx.dest, 'target.txt'), 'utf8'), 'target');
});

for (const format of ['zip', 'tar.gz'] as const) {
  corrupt(
    `extract :: ${format}: into a folder that is not empty, an entry replaces a link already there instead of writing through it`,
    async (ctx) => {
      const archive = join(ctx.dir, `b.${format}`);
      const entries: EntrySpec[] = [{ name: 'build.txt', content: 'new' }];
      if (format === 'zip') await writeZip(archive, entries);
      else await writeTar(archive, entries, { gzip: true });
      const outside = join(ctx.dir, 'outside.txt');
      await writeFile(outside, 'untouched');
      await symlink(outside, join(ctx.dest, 'build.txt'));
      await extractArchive(archive, ctx.dest);
      assert.is(await readFile(outside, 'utf8'), 'untouched');
      assert.ok((await lstat(join(ctx.dest, 'build.txt'))).isFile(), 'the link was replaced by a file');
      assert.is(await readFile(join(ctx.dest, 'build.txt'), 'utf8'), 'new');
    },
  );
}

corrupt.run();

// ---

const unsafe = extractSuite('extract unsafe');

unsafe('extract :: zip entry with ../ is refused, naming it', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [...sampleBuild('A'), { name: 'xx/evil.txt', content: 'evil' }], {
    'xx/evil.txt': '../evil.txt',
  });
  await rejects(extractArchive(archive, ctx.dest), /refused archive entry "\.\.\/evil\.txt"/);
  assert.equal(await outsideDest(ctx), []);
});

unsafe('extract :: zip entry with an absolute path is refused', async (ctx) => {
  const abs = join(ctx.dir, 'abs.txt'); // an absolute path of the same length as the placeholder below
  const placeholder = 'x'.repeat(abs.length);
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [{ name: placeholder, content: 'evil' }], { [placeholder]: abs });
  await rejects(extractArchive(archive, ctx.dest), /refused archive entry ".*abs\.txt": absolute path/);
  assert.not.ok(await entryExists(abs), 'nothing written at the absolute path');
});

unsafe('extract :: zip link escaping the folder is refused', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [...sampleBuild('A'), { name: 'Resources/out', symlinkTo: '../../escaped' }]);
  await rejects(
    extractArchive(archive, ctx.dest),
    /refused archive entry "Resources\/out": it is a link to "\.\.\/\.\.\/escaped", outside/,
  );
  assert.not.ok(await entryExists(join(ctx.dest, 'Resources', 'out')));
});

unsafe('extract :: zip link with a target longer than 4096 bytes is refused', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [{ name: 'long', symlinkTo: 'a/'.repeat(2100) }]);
  await rejects(
    extractArchive(archive, ctx.dest),
    /refused archive entry "long": it is a link with an overlong target/,
  );
  assert.not.ok(await entryExists(join(ctx.dest, 'long')));
});

unsafe('extract :: zip link that climbs back up after going down is refused', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [
    { name: 'here', symlinkTo: '.' },
    { name: 'sneaky', symlinkTo: 'here/../x' },
  ]);
  await rejects(
    extractArchive(archive, ctx.dest),
    /"sneaky": it is a link whose target "here\/\.\.\/x" climbs back up/,
  );
});

unsafe('extract :: zip entry written through a link is refused', async (ctx) => {
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [
    { name: 'Resources/', dir: true },
    { name: 'l', symlinkTo: 'Resources' },
    { name: 'l/x.txt', content: 'x' },
  ]);
  await rejects(extractArchive(archive, ctx.dest), /"l\/x\.txt": its path goes through a link/);
});

unsafe('extract :: tar link escaping the folder is refused', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar.gz');
  await writeTar(archive, [...sampleBuild('A'), { name: 'escape', symlinkTo: '../../outside' }], { gzip: true });
  await rejects(
    extractArchive(archive, ctx.dest),
    /refused archive entry "escape": it is a link to "\.\.\/\.\.\/outside", outside/,
  );
  assert.not.ok(await entryExists(join(ctx.dest, 'escape')));
});

unsafe('extract :: tar link to an absolute path is refused', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar');
  await writeRawTar(archive, [{ path: 'etc', type: 'SymbolicLink', linkpath: '/etc' }]);
  await rejects(extractArchive(archive, ctx.dest), /"etc": it is a link to the absolute path "\/etc"/);
});

unsafe('extract :: tar entries with ../ or absolute paths are refused, not stripped', async (ctx) => {
  const up = join(ctx.dir, 'up.tar');
  await writeRawTar(up, [
    { path: 'ok.txt', type: 'File', content: 'ok' },
    { path: '../evil.txt', type: 'File', content: 'evil' },
  ]);
  await rejects(extractArchive(up, ctx.dest), /"\.\.\/evil\.txt": its path climbs out/);
  const abs = join(ctx.dir, 'abs.tar');
  await writeRawTar(abs, [{ path: '/tmp/evil.txt', type: 'File', content: 'evil' }]);
  await rejects(extractArchive(abs, ctx.dest), /"\/tmp\/evil\.txt": it has an absolute path/);
  assert.equal(await outsideDest(ctx), []);
});

unsafe('extract :: tar hard link out of the folder is refused', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar');
  await writeRawTar(archive, [{ path: 'passwd', type: 'Link', linkpath: '../../../etc/passwd' }]);
  await rejects(extractArchive(archive, ctx.dest), /"passwd": it is a hard link to "\.\.\/\.\.\/\.\.\/etc\/passwd"/);
});

unsafe('extract :: tar device entries are refused', async (ctx) => {
  const archive = join(ctx.dir, 'b.tar');
  await writeRawTar(archive, [{ path: 'null', type: 'CharacterDevice' }]);
  await rejects(extractArchive(archive, ctx.dest), /"null": it is a CharacterDevice entry/);
  const fifo = join(ctx.dir, 'f.tar');
  await writeRawTar(fifo, [{ path: 'pipe', type: 'FIFO' }]);
  await rejects(extractArchive(fifo, ctx.dest), /"pipe": it is a FIFO entry/);
});

unsafe.run();
