/**
 * Shared files through the real daemon: real folders and files in a temp instance folder, listed and downloaded over
 * HTTP (instance token and the dashboard's Admin route), byte ranges, every escape attempt refused, a folder outside
 * Files.Folders refused, and `watchdog files` / `watchdog fetch` against the daemon.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runMain } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { basic, type RunningDaemon, startDaemon, waitState } from '../_support/daemon.ts';
import { freePort, tempDir } from '../_support/env.ts';

const KEY = 'fk';
const TOKEN = 'tok';
const AUTH = basic(KEY, TOKEN);
const ADMIN = basic('admin', 'pw');

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One GET with `path` sent byte for byte (no URL normalisation, so `..` and `%2e%2e` reach the daemon as written). */
function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, headers: { connection: 'close', ...headers }, timeout: 10_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer to ${path} within 10 s`)));
    req.on('error', reject);
    req.end();
  });
}

const json = <T>(a: Answer): T => JSON.parse(a.body.toString('utf8')) as T;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Listing {
  path: string;
  entries: Array<{ name: string; type: string; size: number; modified: string }>;
  truncated: number;
}

/** 3 MiB of bytes that differ at every offset a range could pick, so a wrong offset cannot match by chance. */
function bigContent(): Buffer {
  const b = Buffer.alloc(3 * 1024 * 1024);
  for (let i = 0; i < b.length; i += 4) b.writeUInt32LE(i, i);
  return b;
}

const s = suite('e2e :: files');

s('files :: listing, download, ranges, escapes refused, not-shared refused, CLI files and fetch', async () => {
  const dir = await tempDir('wd-files-e2e-');
  const inst = join(dir.path, 'instances', KEY);
  const round = join(inst, 'data', 'replays', 'round-1');
  await mkdir(round, { recursive: true });
  await mkdir(join(inst, 'data', 'other'), { recursive: true });
  await mkdir(join(inst, 'dumps'), { recursive: true });
  const big = bigContent();
  await writeFile(join(round, 'big.zip'), big);
  await writeFile(join(round, 'notes.txt'), 'round one\n');
  await writeFile(join(round, '.hidden'), 'SECRET-HIDDEN');
  await writeFile(join(inst, 'data', 'other', 'secret.db'), 'SECRET-OTHER');
  await writeFile(join(inst, 'dumps', 'empty.dmp'), '');
  await writeFile(join(dir.path, 'outside.txt'), 'SECRET-OUTSIDE');
  // A symlink out of the shared folder, and one that stays inside it.
  await symlink(join(dir.path, 'outside.txt'), join(round, 'escape.txt'));
  await symlink(join(round, 'notes.txt'), join(inst, 'data', 'replays', 'notes-link.txt'));
  const yaml = testConfig({
    extra: ['Admin:', '  Username: admin', '  Password: pw'].join('\n'),
    instances: [{ key: KEY, token: TOKEN, port: await freePort() }],
  });
  let d: RunningDaemon | null = null;
  try {
    d = await startDaemon(yaml, { dir: dir.path });
    // The files do not need a server, but the instance must be registered; a running one also writes logs/.
    await waitState(d, KEY, TOKEN, 'server.running', { timeoutMs: 30_000 });
    const url = d.url;
    const at = (p: string, h: Record<string, string> = {}) => get(url, p, { authorization: AUTH, ...h });

    // The root lists the shared folders that exist (the daemon makes logs/).
    const root = await at(`/instances/${KEY}/files`);
    assert.is(root.status, 200, root.body.toString());
    const rootNames = json<Listing>(root).entries.map((e) => e.name);
    assert.ok(rootNames.includes('data/replays') && rootNames.includes('dumps'), rootNames.join());
    assert.not.ok(rootNames.includes('data/other'));

    // A nested folder: sizes and times, hidden names and the escaping symlink left out, the inside one kept.
    const nested = await at(`/instances/${KEY}/files/data/replays/round-1/`);
    assert.is(nested.status, 200);
    const listing = json<Listing>(nested);
    assert.is(listing.path, 'data/replays/round-1');
    assert.equal(
      listing.entries.map((e) => [e.name, e.type, e.size]),
      [
        ['big.zip', 'file', big.length],
        ['notes.txt', 'file', 10],
      ],
    );
    assert.is(listing.entries[0]?.modified, (await stat(join(round, 'big.zip'))).mtime.toISOString(), 'its mtime');
    const replays = json<Listing>(await at(`/instances/${KEY}/files/data/replays`)).entries.map((e) => e.name);
    assert.equal(replays, ['notes-link.txt', 'round-1']);

    // The whole file, streamed, with Accept-Ranges; an encoded name is decoded.
    const whole = await at(`/instances/${KEY}/files/data/replays/round-1/big%2Ezip`);
    assert.is(whole.status, 200);
    assert.is(whole.headers['accept-ranges'], 'bytes');
    assert.is(whole.headers['content-length'], String(big.length));
    assert.is(sha(whole.body), sha(big));
    const empty = await at(`/instances/${KEY}/files/dumps/empty.dmp`);
    assert.is(empty.status, 200);
    assert.is(empty.body.length, 0);

    // Ranges: a middle slice, an open end, a suffix; past the end is 416; several ranges get the whole file.
    const file = `/instances/${KEY}/files/data/replays/round-1/big.zip`;
    const mid = await at(file, { range: 'bytes=1000000-1000099' });
    assert.is(mid.status, 206);
    assert.is(mid.headers['content-range'], `bytes 1000000-1000099/${big.length}`);
    assert.ok(mid.body.equals(big.subarray(1000000, 1000100)));
    const tail = await at(file, { range: `bytes=${big.length - 5}-` });
    assert.is(tail.status, 206);
    assert.ok(tail.body.equals(big.subarray(big.length - 5)));
    const suffix = await at(file, { range: 'bytes=-7' });
    assert.is(suffix.status, 206);
    assert.is(suffix.headers['content-range'], `bytes ${big.length - 7}-${big.length - 1}/${big.length}`);
    assert.ok(suffix.body.equals(big.subarray(big.length - 7)));
    const past = await at(file, { range: `bytes=${big.length}-` });
    assert.is(past.status, 416);
    assert.is(past.headers['content-range'], `bytes */${big.length}`);
    const several = await at(file, { range: 'bytes=0-1,5-6' });
    assert.is(several.status, 200);
    assert.is(several.body.length, big.length);

    // Escapes: literal and encoded dot segments, encoded separators, double encoding, NUL, absolute paths and
    // symlinks out. Each is refused and none answers with a byte of what lies outside.
    const escapes: Array<[string, number[]]> = [
      ['data/replays/../other/secret.db', [403]], // the URL parser folds `..`: data/other is not shared
      ['data/replays/%2e%2e/other/secret.db', [403]],
      ['data/replays/..%2fother%2fsecret.db', [400]],
      ['data/replays/%2e%2e%2f%2e%2e%2f%2e%2e%2foutside.txt', [400]],
      ['data/replays/%252e%252e%252foutside.txt', [404]], // decoded once: a name "%2e%2e%2foutside.txt"
      ['data/replays/round-1/notes.txt%00', [400]],
      ['%2fetc%2fpasswd', [400]],
      ['data%2freplays%2fround-1%2fnotes.txt', [400]],
      ['data/replays/round-1/escape.txt', [404]],
      ['data/replays/round-1/.hidden', [404]],
      ['data/replays/%2E%2E%5C..%5Cother', [400]],
    ];
    for (const [path, statuses] of escapes) {
      const a = await at(`/instances/${KEY}/files/${path}`);
      assert.ok(statuses.includes(a.status), `${path}: ${a.status} ${a.body.toString()}`);
      assert.not.match(a.body.toString(), /SECRET-/);
    }
    const outsideRoot = await at(`/instances/${KEY}/files/../../../outside.txt`);
    assert.not.match(outsideRoot.body.toString(), /SECRET-/);
    // A folder not in Files.Folders, the instance folder itself, and the snapshots (not shared unless listed).
    for (const path of ['data/other/secret.db', 'data', 'config.toml', 'binaries', 'backups']) {
      const a = await at(`/instances/${KEY}/files/${path}`);
      assert.is(a.status, 403, `${path}: ${a.status}`);
      assert.match(json<{ error: string }>(a).error, /not a shared folder/);
    }

    // Credentials: none is 401, another instance's user 403; the dashboard route needs Admin.
    assert.is((await get(url, `/instances/${KEY}/files`)).status, 401);
    assert.is((await get(url, `/instances/${KEY}/files`, { authorization: basic(KEY, 'wrong') })).status, 401);
    const viaAdmin = await get(url, `/api/instances/${KEY}/files/data/replays/round-1/notes.txt`, {
      authorization: ADMIN,
    });
    assert.is(viaAdmin.status, 200);
    assert.is(viaAdmin.body.toString(), 'round one\n');
    assert.is((await get(url, `/api/instances/${KEY}/files`, { authorization: AUTH })).status, 401);
    const adminEscape = await get(url, `/api/instances/${KEY}/files/data/replays/..%2fother%2fsecret.db`, {
      authorization: ADMIN,
    });
    assert.is(adminEscape.status, 400);
    assert.is((await get(url, `/api/instances/nope/files`, { authorization: ADMIN })).status, 404);

    // The dashboard page carries the files panel, and its script is served.
    const page = await get(url, '/', { authorization: ADMIN });
    assert.match(page.body.toString(), /<details class="files">/);
    const panel = await get(url, '/dashboard/files-panel.js', { authorization: ADMIN });
    assert.is(panel.status, 200);
    assert.match(panel.body.toString(), /export function attachFilesPanel/);

    // Downloads are audited with the file; listings are not.
    const audit = await readFile(join(dir.path, 'logs', 'audit.log'), 'utf8');
    const downloads = audit
      .split('\n')
      .filter((l) => l.includes('"download"'))
      .map((l) => JSON.parse(l) as { file: string; status: number; user: string | null });
    assert.ok(
      downloads.some((a) => a.file === 'data/replays/round-1/big.zip' && a.status === 206 && a.user === KEY),
      audit,
    );
    assert.ok(downloads.some((a) => a.file === 'data/replays/round-1/notes.txt' && a.user === 'admin'));

    // The CLI: a table of the nested folder, then a fetch to a file, and a resumed fetch of a partial copy.
    const target = ['--url', url, '--token', TOKEN];
    const table = await runMain(['files', KEY, 'data/replays/round-1', ...target], { cwd: dir.path });
    assert.is(table.code, 0, table.stderr);
    assert.match(table.stdout, /^big\.zip\s+3\.1 MB\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    assert.match(table.stdout, /^notes\.txt\s+10 bytes\s+/m);
    const folders = await runMain(['files', KEY, ...target], { cwd: dir.path });
    assert.is(folders.code, 0, folders.stderr);
    assert.match(folders.stdout, /^data\/replays\/\s+-\s+/m);
    const refused = await runMain(['files', KEY, 'data/other', ...target], { cwd: dir.path });
    assert.is(refused.code, 1);
    assert.match(refused.stderr, /403.*not a shared folder/s);

    const out = join(dir.path, 'copy.zip');
    const fetched = await runMain(['fetch', KEY, 'data/replays/round-1/big.zip', '--out', out, ...target], {
      cwd: dir.path,
    });
    assert.is(fetched.code, 0, fetched.stderr);
    assert.is(sha(await readFile(out)), sha(big));
    await writeFile(out, big.subarray(0, 1_234_567));
    const resumed = await runMain(
      ['fetch', KEY, 'data/replays/round-1/big.zip', '--out', out, '--continue', ...target],
      { cwd: dir.path },
    );
    assert.is(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /resumed/);
    assert.is(sha(await readFile(out)), sha(big));
    const missing = await runMain(['fetch', KEY, 'data/replays/none.zip', '--out', join(dir.path, 'x'), ...target], {
      cwd: dir.path,
    });
    assert.is(missing.code, 1);
    assert.match(missing.stderr, /404: data\/replays\/none\.zip of fk: no such file/);
    const wrongToken = await runMain(['files', KEY, '--url', url, '--token', 'nope'], { cwd: dir.path });
    assert.is(wrongToken.code, 1);
    assert.match(wrongToken.stderr, /401: the token for instance fk was refused/);
    const unknown = await runMain(['files', 'nope', ...target], { cwd: dir.path });
    assert.is(unknown.code, 1);
    assert.match(unknown.stderr, /nope/);
    const aFile = await runMain(['files', KEY, 'dumps/empty.dmp', ...target], { cwd: dir.path });
    assert.is(aFile.code, 1);
    assert.match(aFile.stderr, /is a file, not a folder/);
  } finally {
    if (d) await d.stop();
    await rm(dir.path, { recursive: true, force: true });
    await dir.cleanup();
  }
});

s.run();
