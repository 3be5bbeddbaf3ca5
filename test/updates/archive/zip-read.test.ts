import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { ZipFile } from 'yazl';
import { extractArchive } from '../../../src/updates/archive/extract.ts';
import { tempSuite } from '../../_support/env.ts';
import { type EntrySpec, writeZip } from '../../fixtures/archives/build.ts';
import { rejects } from '../_support/instance-suite.ts';

/*
 * How a zip is read (src/updates/archive/zip.ts, through yauzl): the edges of its local headers, its end records
 * and its damage.
 */

const small = tempSuite('zip reading', {
  ctx: { dest: '' },
  before: async (ctx) => {
    ctx.dest = join(ctx.dir, 'dest');
    await mkdir(ctx.dest);
  },
});

/** The offset of a zip's end of central directory record. */
const endOfDirectory = (zip: Buffer) => zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));

/**
 * A one-entry zip rewritten so that its local header carries `padding` more bytes of extra field than the central
 * directory says (an unknown extra block, as some archivers write): the data then starts later than a reader
 * going by the central directory would guess.
 */
async function padLocalExtra(archive: string, padding: number): Promise<void> {
  const zip = await readFile(archive);
  assert.is(zip.readUInt32LE(0), 0x04034b50, 'a local header first');
  const nameLength = zip.readUInt16LE(26);
  const extraLength = zip.readUInt16LE(28);
  const at = 30 + nameLength + extraLength;
  const block = Buffer.alloc(padding);
  block.writeUInt16LE(0xcafe, 0);
  block.writeUInt16LE(padding - 4, 2);
  const out = Buffer.concat([zip.subarray(0, at), block, zip.subarray(at)]);
  out.writeUInt16LE(extraLength + padding, 28);
  const eocd = endOfDirectory(out);
  assert.ok(eocd > 0, 'an end of central directory record');
  out.writeUInt32LE(out.readUInt32LE(eocd + 16) + padding, eocd + 16);
  await writeFile(archive, out);
}

small('zip read :: stored and deflated small entries come out byte for byte, with their modes', async (ctx) => {
  const random = randomBytes(100_000).toString('hex');
  const text = randomBytes(60_000).toString('base64');
  const archive = join(ctx.dir, 'b.zip');
  await writeZip(archive, [
    { name: 'stored.bin', content: random, store: true },
    { name: 'bin/run', content: text, mode: 0o755 },
    { name: 'one.txt', content: 'x' },
  ]);
  await extractArchive(archive, ctx.dest);
  assert.ok((await readFile(join(ctx.dest, 'stored.bin'), 'utf8')) === random, 'stored entry intact');
  assert.is(await readFile(join(ctx.dest, 'bin/run'), 'utf8'), text);
  assert.is((await stat(join(ctx.dest, 'bin/run'))).mode & 0o777, 0o755);
  assert.is(await readFile(join(ctx.dest, 'one.txt'), 'utf8'), 'x');
});

small(
  'zip read :: a local extra field longer than the central directory says: the data is still found',
  async (ctx) => {
    for (const store of [true, false]) {
      const archive = join(ctx.dir, `padded-${store}.zip`);
      const content = randomBytes(20_000).toString('hex');
      await writeZip(archive, [{ name: 'f.txt', content, store }]);
      await padLocalExtra(archive, 4000);
      const dest = join(ctx.dest, String(store));
      await mkdir(dest);
      await extractArchive(archive, dest);
      assert.is(await readFile(join(dest, 'f.txt'), 'utf8'), content, store ? 'stored' : 'deflated');
    }
  },
);

small('zip read :: a build of many small entries, stored and deflated, comes out byte for byte', async (ctx) => {
  // Some 2.5 MB of small entries, stored and deflated in turn.
  const entries: EntrySpec[] = Array.from({ length: 120 }, (_, i) => ({
    name: `lib/m${i % 7}/part${i}.dll`,
    content: i % 2 ? randomBytes(20_000 + i) : randomBytes(15_000 + i).toString('base64'),
    store: i % 2 === 1,
  }));
  const archive = join(ctx.dir, 'many.zip');
  await writeZip(archive, entries);
  await extractArchive(archive, ctx.dest);
  for (const e of entries) {
    assert.ok((await readFile(join(ctx.dest, e.name))).equals(Buffer.from(e.content ?? '')), e.name);
  }
});

/** A zip made with yazl's own options (a comment, zip64 records), which the fixture's builder does not take. */
async function yazlZip(path: string, files: Record<string, string>, end: { comment?: string; zip64?: boolean }) {
  const zip = new ZipFile();
  for (const [name, content] of Object.entries(files)) {
    zip.addBuffer(Buffer.from(content), name, { mode: 0o100644, forceZip64Format: end.zip64 ?? false });
  }
  const forceZip64Format = end.zip64 ?? false;
  zip.end({ comment: end.comment ?? '', forceZip64Format });
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  await writeFile(path, Buffer.concat(chunks));
}

small('zip read :: a long archive comment after the directory, and zip64 records: both still extract', async (ctx) => {
  const files = { 'a.txt': 'a'.repeat(3000), 'd/b.txt': randomBytes(40_000).toString('hex') };
  const cases = [
    ['comment', { comment: 'c'.repeat(60_000) }],
    ['zip64', { zip64: true }],
  ] as const;
  for (const [label, end] of cases) {
    const archive = join(ctx.dir, `${label}.zip`);
    await yazlZip(archive, files, end);
    const dest = join(ctx.dest, label);
    await mkdir(dest);
    await extractArchive(archive, dest);
    for (const [name, content] of Object.entries(files)) {
      assert.is(await readFile(join(dest, name), 'utf8'), content, `${label}: ${name}`);
    }
  }
});

/** One-entry zips broken after writing, each a corrupt archive that must be refused without hanging. */
const CORRUPT: Array<{ title: string; entry: EntrySpec; corrupt: (zip: Buffer) => Buffer }> = [
  {
    title: 'a local header offset that points past the end is a corrupt archive, nothing hangs',
    entry: { name: 'f.txt', content: 'y'.repeat(5000) },
    corrupt: (zip) => {
      const central = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
      zip.writeUInt32LE(zip.length + 10, central + 42);
      return zip;
    },
  },
  {
    // Keep the central directory, cut the data short: the header is found, its data runs past the end.
    title: 'a small entry whose data overflows the file is a corrupt archive',
    entry: { name: 'f.txt', content: randomBytes(3000).toString('hex'), store: true },
    corrupt: (zip) => {
      const eocd = endOfDirectory(zip);
      const cut = Buffer.concat([zip.subarray(0, 1000), zip.subarray(zip.readUInt32LE(eocd + 16))]);
      cut.writeUInt32LE(1000, cut.length - (zip.length - eocd) + 16);
      return cut;
    },
  },
  {
    title: 'a directory offset pointing past the end is a corrupt archive',
    entry: { name: 'f.txt', content: 'z'.repeat(100) },
    corrupt: (zip) => {
      zip.writeUInt32LE(zip.length + 1000, endOfDirectory(zip) + 16);
      return zip;
    },
  },
];

for (const c of CORRUPT) {
  small(`zip read :: ${c.title}`, async (ctx) => {
    const archive = join(ctx.dir, 'b.zip');
    await writeZip(archive, [c.entry]);
    await writeFile(archive, c.corrupt(await readFile(archive)));
    await rejects(extractArchive(archive, ctx.dest), /zip archive is corrupt/);
  });
}

small.run();
