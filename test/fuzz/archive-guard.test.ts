/**
 * Fuzzing the archive entry guard (src/updates/archive/entry-guard.ts) and the extraction built on it: no entry
 * path, symbolic-link target or hard-link target that would resolve outside the staging folder is accepted, and
 * whatever is accepted resolves inside it. First the guard's own functions on generated names (`..`, absolute and
 * drive paths, backslashes, NUL, unicode, long names); then real tar archives of generated entries (files,
 * folders, symbolic and hard links over a small alphabet, so names collide and links chain), extracted for real,
 * after which nothing may exist outside the staging folder and every link in it must point inside.
 */
import { lstat, mkdir, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../src/errors.ts';
import { checkHardlinkTarget, checkSymlinkTarget, entrySegments } from '../../src/updates/archive/entry-guard.ts';
import { extractArchive } from '../../src/updates/archive/extract.ts';
import { tempSuite, within } from '../_support/env.ts';
import { type EntrySpec, writeRawTar, writeZip } from '../fixtures/archives/build.ts';
import { binaryString, fuzz } from './_support/fuzz.ts';

/** Where the extractors place an entry (tree.ts), or null for the folder itself (a `./` directory entry). */
const entryDestination = (dest: string, name: string): string | null => {
  const segments = entrySegments(name);
  return segments.length === 0 ? null : join(dest, ...segments);
};

/** `p` is `dir` or below it. */
function inside(dir: string, p: string): boolean {
  const rel = relative(dir, p);
  // `.. ` and `...` are ordinary names below `dir`; only `..` itself or a path starting `../` climbs out.
  return rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** Runs `check`; true when it accepted, false when it refused with the guard's UpdateError (anything else fails). */
function accepted(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch (err) {
    if (!(err instanceof UpdateError)) throw err;
    assert.match(err.message, /^refused archive entry "/);
    return false;
  }
}

const SEGMENT = [
  '..',
  '.',
  '',
  'a',
  'b',
  '...',
  '..\\..',
  'a\\..',
  'C:',
  'c:x',
  '\u0000',
  'é',
  '\u2025',
  '\uff0e\uff0e',
  '%2e%2e',
  ' ..',
  '.. ',
  'x'.repeat(255),
];
const SEP = ['/', '\\', '//', '/./'];

/** Entry names and link targets: segments of the alphabet above (and any text), joined by either separator. */
const entryPath: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('', '/', '\\', '\\\\', './', 'C:\\', 'c:/'),
      fc.array(fc.tuple(fc.oneof(fc.constantFrom(...SEGMENT), fc.string({ maxLength: 4 })), fc.constantFrom(...SEP)), {
        maxLength: 6,
      }),
      fc.constantFrom('', '/', '\\'),
    )
    .map(([lead, parts, tail]) => lead + parts.map(([s, sep], i) => (i === 0 ? s : sep + s)).join('') + tail),
  binaryString({ maxLength: 30 }),
);

const archive = tempSuite<{ dest: string }>('fuzz/archive guard', {
  prefix: 'wd-fuzz-archive-',
  ctx: { dest: '' },
  before: (ctx) => {
    ctx.dest = join(ctx.dir, 'parent', 'dest');
  },
});

archive('fuzz/archive :: an accepted entry path lands strictly inside the folder, on any name', async ({ dest }) => {
  await fuzz(
    'archive/entry-path',
    fc.property(entryPath, (name) => {
      let place: string | null = null;
      if (!accepted(() => (place = entryDestination(dest, name)))) return;
      if (place === null) return assert.equal(entrySegments(name), [], `${JSON.stringify(name)} is the folder itself`);
      assert.ok(inside(dest, place) && place !== dest, `${JSON.stringify(name)} → ${place}`);
    }),
    { seed: 0xa7c4_01, numRuns: 4000 },
  );
});

archive(
  'fuzz/archive :: an accepted symbolic link resolves inside the folder, read with either separator',
  async ({ dest }) => {
    await fuzz(
      'archive/symlink-target',
      fc.property(entryPath, entryPath, (name, target) => {
        if (!accepted(() => checkSymlinkTarget(name, target))) return;
        // A name that is the folder itself is refused for anything but a folder entry (tar.ts, zip.ts).
        const place = entryDestination(dest, name);
        if (place === null) return;
        // Linux reads a backslash as part of a name; a Windows tool or a copy to Windows reads it as a separator.
        for (const t of [target, target.replaceAll('\\', '/')]) {
          const to = posix.resolve(dirname(place), t);
          assert.ok(inside(dest, to), `${JSON.stringify(name)} → ${JSON.stringify(target)} resolves to ${to}`);
        }
      }),
      { seed: 0xa7c4_02, numRuns: 4000 },
    );
  },
);

archive('fuzz/archive :: an accepted hard link names a path inside the folder', async ({ dest }) => {
  await fuzz(
    'archive/hardlink-target',
    fc.property(entryPath, entryPath, (name, target) => {
      if (!accepted(() => checkHardlinkTarget(name, target))) return;
      for (const t of [target, target.replaceAll('\\', '/')]) {
        assert.ok(inside(dest, resolve(dest, t)), `hard link ${JSON.stringify(name)} → ${JSON.stringify(target)}`);
      }
    }),
    { seed: 0xa7c4_03, numRuns: 4000 },
  );
});

// ---

/** A small alphabet, so entries collide, nest under links and link to each other. */
const NAMES = ['a', 'b', 'l', 'h', 'a/b', 'a/l', 'a/h', 'a/b/l', 'l/x', 'a/l/x', 'a/b/c/l'];
const TARGETS = ['..', '../..', '../../..', '.', 'a', 'a/b', 'l', 'a/l', '../a', 'x', '../x', '../../x'];

type TarEntry =
  | { type: 'File'; path: string; content: string }
  | { type: 'Directory' | 'SymbolicLink'; path: string; linkpath?: string }
  | { type: 'Link'; path: string; linkpath: string };

/**
 * Entries of one archive. A hard link names an earlier entry of the same archive (`ref` picks which), as archivers
 * write them, so links to links and to folders come up often instead of by rare chance.
 */
const tarEntries: fc.Arbitrary<TarEntry[]> = fc
  .array(
    fc.oneof(
      fc.record({
        type: fc.constant('File' as const),
        path: fc.constantFrom(...NAMES),
        content: fc.constantFrom('1', '2'),
      }),
      fc.record({ type: fc.constant('Directory' as const), path: fc.constantFrom(...NAMES) }),
      fc.record({
        type: fc.constant('SymbolicLink' as const),
        path: fc.constantFrom(...NAMES),
        linkpath: fc.constantFrom(...TARGETS),
      }),
      fc.record({ type: fc.constant('Link' as const), path: fc.constantFrom(...NAMES), ref: fc.nat() }),
    ),
    { minLength: 1, maxLength: 7 },
  )
  .map((drafts) =>
    drafts.map((d, i): TarEntry => {
      if (!('ref' in d)) return d;
      const earlier = drafts.slice(0, i);
      const target = earlier.length > 0 ? earlier[d.ref % earlier.length]?.path : undefined;
      return { type: 'Link', path: d.path, linkpath: target ?? NAMES[d.ref % NAMES.length] ?? 'a' };
    }),
  );

/** Every path under `dir`, folders first, found with lstat (links are not followed). */
async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir).catch(() => [])) {
    const p = join(dir, name);
    out.push(p);
    if ((await lstat(p)).isDirectory()) out.push(...(await walk(p)));
  }
  return out;
}

archive('fuzz/archive :: real tar extraction leaves nothing outside and no link pointing out', async ({ dir }) => {
  const tarFile = join(dir, 'fuzz.tar');
  let extracted = 0;
  await fuzz(
    'archive/extract',
    fc.asyncProperty(tarEntries, async (entries) => {
      if (await extractContained(dir, tarFile, (file) => writeRawTar(file, entries))) extracted++;
    }),
    { seed: 0xa7c4_04, numRuns: 150, budgetMs: 10_000, floor: () => extracted >= 10 },
  );
  // Refusing everything would pass the checks above: some archives must have been extracted whole.
  assert.ok(extracted >= 10, `only ${extracted} tar archives were extracted`);
});

/**
 * Extracts the archive `write` puts at `file` into `<dir>/parent/dest`, beside an untouched sentinel file, and
 * asserts that a refusal, if any, is an UpdateError, that nothing landed beside `dest` and that no link inside it
 * points outside. True when the archive was extracted rather than refused.
 */
async function extractContained(dir: string, file: string, write: (file: string) => Promise<void>): Promise<boolean> {
  const parent = join(dir, 'parent');
  const dest = join(parent, 'dest');
  const sentinel = join(parent, 'sentinel.txt');
  await rm(parent, { recursive: true, force: true });
  await mkdir(dest, { recursive: true });
  await writeFile(sentinel, 'untouched');
  await write(file);
  let error: unknown;
  await within(5_000, 'extractArchive', extractArchive(file, dest)).then(
    () => undefined,
    (err: unknown) => {
      error = err;
    },
  );
  if (error !== undefined) assert.instance(error, UpdateError, `a refusal is an UpdateError, not ${String(error)}`);
  assert.equal(
    (await walk(parent)).filter((p) => !inside(dest, p)),
    [sentinel],
    'nothing lands beside the folder',
  );
  assert.is(await readFile(sentinel, 'utf8'), 'untouched');
  for (const p of await walk(dest)) {
    if (!(await lstat(p)).isSymbolicLink()) continue;
    const to = resolve(dirname(p), await readlink(p));
    assert.ok(inside(dest, to), `${relative(dest, p)} → ${await readlink(p)} points outside (${to})`);
  }
  return error === undefined;
}

/** Zip entry names: the tar alphabet and names yazl would refuse to write (put in after it wrote the archive). */
const ZIP_NAMES = [
  'a',
  'l',
  'a/l',
  'a/b/l',
  'l/x',
  'a/l/x',
  'a/',
  'l/',
  '../x',
  '/etc',
  'a\\..\\..\\x',
  'C:/x',
  './a',
  'a//b',
];

/**
 * A zip of `entries`, written by yazl under placeholder names of the same length (`A`, `BQQ`, …: yazl refuses
 * `..` and absolute names), which are then swapped in byte for byte. Every name is ASCII, so no UTF-8 flag differs.
 */
async function writeAnyZip(path: string, entries: Array<{ name: string; link?: string; content?: string }>) {
  const rename: Record<string, string> = {};
  const specs: EntrySpec[] = entries.map((e, i) => {
    const dir = e.name.endsWith('/') && e.link === undefined;
    const body = String.fromCharCode(65 + i) + 'Q'.repeat(Math.max(0, e.name.length - 1 - (dir ? 1 : 0)));
    const placeholder = dir ? `${body}/` : body.padEnd(e.name.length, 'Q');
    rename[placeholder] = e.name;
    if (dir) return { name: placeholder, dir: true };
    if (e.link !== undefined) return { name: placeholder, symlinkTo: e.link };
    return { name: placeholder, content: e.content ?? '1', store: true };
  });
  await writeZip(path, specs, rename);
}

archive('fuzz/archive :: real zip extraction leaves nothing outside and no link pointing out', async ({ dir }) => {
  const zipFile = join(dir, 'fuzz.zip');
  let extracted = 0;
  const zipEntry = fc.oneof(
    fc.record({ name: fc.constantFrom(...ZIP_NAMES), content: fc.constantFrom('1', '2') }),
    fc.record({
      name: fc.constantFrom(...ZIP_NAMES).filter((n) => !n.endsWith('/')),
      link: fc.constantFrom(...TARGETS),
    }),
  );
  await fuzz(
    'archive/extract-zip',
    fc.asyncProperty(fc.array(zipEntry, { minLength: 1, maxLength: 6 }), async (entries) => {
      if (await extractContained(dir, zipFile, (file) => writeAnyZip(file, entries))) extracted++;
    }),
    { seed: 0xa7c4_05, numRuns: 100, budgetMs: 8_000, floor: () => extracted >= 10 },
  );
  assert.ok(extracted >= 10, `only ${extracted} zip archives were extracted`);
  if (process.env.FUZZ_REPORT) console.log(`zip archives extracted whole: ${extracted}`);
});

archive.run();
