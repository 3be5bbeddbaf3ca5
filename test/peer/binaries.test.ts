/**
 * `GET|HEAD /instances/<key>/binaries/*` (the client zip a launcher downloads, no auth) under the real
 * SS14.Watchdog (ASP.NET static files over the instance's `binaries/`) and under ours, side by side, each in its own
 * folder with the same `binaries/` contents: a zip, a file in a subfolder, a dot-file, a symbolic link to a file
 * outside the folder. Each side's answer is asserted; where they differ the line is printed.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { freePort, tempDir } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import {
  difference,
  killPid,
  peerConfig,
  peerProgram,
  peerSuite,
  pidsWith,
  type RunningSide,
  type SideName,
  startSide,
} from './_support/peer.ts';

const KEY = 'main';
const ZIP = Buffer.from('PK\u0005\u0006' + '\u0000'.repeat(18), 'latin1'); // an empty zip archive, 22 bytes

interface Answer {
  status: number;
  type: string | null;
  length: string | null;
  body: Buffer;
  allow: string | null;
}

interface Ctx {
  sides: Partial<Record<SideName, RunningSide>>;
  dirs: Array<{ path: string; cleanup: () => Promise<void> }>;
  answers: Record<string, Partial<Record<SideName, Answer>>>;
}

/** One request on a fresh connection; a connection closed without an answer is status 0. */
async function ask(base: string, path: string, method = 'GET'): Promise<Answer> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: { connection: 'close' },
      signal: AbortSignal.timeout(5000),
    });
  } catch (err) {
    return { status: 0, type: null, length: null, body: Buffer.from(String((err as Error).cause ?? err)), allow: null };
  }
  const body = await res.arrayBuffer().then(
    (b) => Buffer.from(b),
    (err: unknown) => {
      console.log(`peer: ${method} ${path}: the body could not be read: ${String((err as Error).cause ?? err)}`);
      return Buffer.from('(body unreadable)');
    },
  );
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    length: res.headers.get('content-length'),
    body,
    allow: res.headers.get('allow'),
  };
}

const test = peerSuite<Ctx>('peer :: the binaries/ folder over HTTP, real vs ours', {
  sides: {},
  dirs: [],
  answers: {},
});

test.before(async (ctx) => {
  try {
    await setUp(ctx);
  } catch (err) {
    console.error(err); // uvu reports a failed hook only as a suite that ran nothing
    throw err;
  }
});

async function setUp(ctx: Ctx): Promise<void> {
  await peerProgram();
  await Promise.all(
    (['real', 'ours'] as const).map(async (name) => {
      const dir = await tempDir(`wd-peer-bin-${name}-`);
      ctx.dirs.push(dir);
      const bin = join(dir.path, 'instances', KEY, 'binaries');
      await mkdir(join(bin, 'sub'), { recursive: true });
      await writeFile(join(bin, 'SS14.Client.zip'), ZIP);
      await writeFile(join(bin, 'sub', 'notes.txt'), 'notes\n');
      await writeFile(join(bin, '.hidden'), 'hidden\n');
      await writeFile(join(dir.path, 'outside.txt'), 'outside the binaries folder\n');
      await symlink(join(dir.path, 'outside.txt'), join(bin, 'link.txt'));
      const urlsPort = await freePort();
      const yaml = peerConfig({
        urlsPort,
        persist: false,
        instances: [
          {
            key: KEY,
            port: await freePort(),
            runCommand: fixture('log-starts.mjs'),
            timeoutSeconds: 30,
            env: { FIXTURE_LIFETIME_MS: '60000' },
          },
        ],
      });
      ctx.sides[name] = await startSide(name, dir.path, yaml, urlsPort);
    }),
  );
  const paths: Array<[string, string, string?]> = [
    ['zip', `/instances/${KEY}/binaries/SS14.Client.zip`],
    ['head', `/instances/${KEY}/binaries/SS14.Client.zip`, 'HEAD'],
    ['sub', `/instances/${KEY}/binaries/sub/notes.txt`],
    ['missing', `/instances/${KEY}/binaries/nope.zip`],
    ['folder', `/instances/${KEY}/binaries/sub/`],
    ['dotfile', `/instances/${KEY}/binaries/.hidden`],
    ['symlinkOut', `/instances/${KEY}/binaries/link.txt`],
    ['traversal', `/instances/${KEY}/binaries/..%2f..%2f..%2fappsettings.yml`],
    ['unknownKey', '/instances/nosuch/binaries/SS14.Client.zip'],
    ['post', `/instances/${KEY}/binaries/SS14.Client.zip`, 'POST'],
  ];
  for (const [label, path, method] of paths) {
    ctx.answers[label] = {};
    for (const name of ['real', 'ours'] as const)
      ctx.answers[label]![name] = await ask(ctx.sides[name]!.url, path, method);
  }
}

test.after(async (ctx) => {
  for (const side of Object.values(ctx.sides)) await side.stop();
  for (const dir of ctx.dirs) {
    for (const pid of await pidsWith(join(dir.path, 'instances', KEY, 'config.toml'))) killPid(pid);
    await dir.cleanup();
  }
});

const both = (ctx: Ctx, label: string) => [ctx.answers[label]!.real!, ctx.answers[label]!.ours!] as const;

test('binaries :: the client zip: 200, the same bytes and length; HEAD: 200 with the length and no body', (ctx) => {
  const [real, ours] = both(ctx, 'zip');
  for (const a of [real, ours]) {
    assert.is(a.status, 200);
    assert.ok(a.body.equals(ZIP), "the file's bytes");
    assert.is(a.length, String(ZIP.length));
  }
  assert.is(real.type, 'application/x-zip-compressed');
  assert.is(ours.type, 'application/zip');
  difference(
    'binaries/: a .zip is served as application/zip by ours, application/x-zip-compressed by the real watchdog',
  );
  const [rh, oh] = both(ctx, 'head');
  for (const a of [rh, oh]) assert.equal([a.status, a.length, a.body.length], [200, String(ZIP.length), 0]);
});

test('binaries :: a file in a subfolder is served by both; a missing file and a folder are 404 in both', (ctx) => {
  for (const a of both(ctx, 'sub')) assert.equal([a.status, a.body.toString()], [200, 'notes\n']);
  for (const a of both(ctx, 'missing')) assert.is(a.status, 404);
  for (const a of both(ctx, 'folder')) assert.is(a.status, 404, 'no folder listing');
  for (const a of both(ctx, 'unknownKey')) assert.is(a.status, 404);
});

test('binaries :: nothing outside binaries/ is reachable through an encoded ../ in either', (ctx) => {
  const [real, ours] = both(ctx, 'traversal');
  for (const a of [real, ours]) assert.not.match(a.body.toString(), 'Servers:', 'appsettings.yml not served');
  assert.is(real.status, 404);
  assert.is(ours.status, 400, 'ours refuses a dot segment as a bad request');
  difference(`binaries/ with an encoded ../: ours 400, the real watchdog ${real.status}`);
});

test('binaries :: a symbolic link to a file outside binaries/: the real watchdog follows it, ours does not', (ctx) => {
  const [real, ours] = both(ctx, 'symlinkOut');
  assert.is(real.status, 200, 'the real watchdog answers 200 (and a body that does not match its Content-Length)');
  assert.is(ours.status, 404, 'ours never serves a file outside binaries/');
  assert.not.match(ours.body.toString(), 'outside the binaries folder');
  difference(
    'binaries/: a symbolic link to a file outside the folder: ours 404; the real watchdog follows it (200, with a Content-Length that does not match the body)',
  );
});

test('binaries :: other methods: the real watchdog 404, ours 405 with Allow', (ctx) => {
  const [real, ours] = both(ctx, 'post');
  assert.is(real.status, 404);
  assert.equal([ours.status, ours.allow], [405, 'GET, HEAD']);
  difference('binaries/: POST answers 405 with Allow: GET, HEAD (ours), 404 (real)');
});

test('binaries :: a dot-file is hidden by both (404)', (ctx) => {
  const [real, ours] = both(ctx, 'dotfile');
  assert.is(real.status, 404, 'ASP.NET static files exclude dot-files');
  assert.is(ours.status, 404, 'ours hides them too');
});

test.run();
