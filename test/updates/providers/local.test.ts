import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdateError } from '../../../src/errors.ts';
import { createLocalProvider } from '../../../src/updates/providers/local.ts';
import { tempDir } from '../../_support/env.ts';
import { providerContext } from '../../fixtures/git/context.ts';

interface Ctx {
  dir: string;
  cleanup: () => Promise<void>;
}

const live = () => new AbortController().signal;

async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, UpdateError);
    assert.match((err as Error).message, pattern);
    return;
  }
  assert.unreachable(`expected an UpdateError matching ${pattern}`);
}

const local = suite<Ctx>('local', {} as Ctx);
local.before.each(async (ctx) => {
  const tmp = await tempDir();
  ctx.dir = tmp.path;
  ctx.cleanup = tmp.cleanup;
});
local.after.each((ctx) => ctx.cleanup());

local('local :: revision is Updates.CurrentVersion; apply adopts it', async (ctx) => {
  const provider = createLocalProvider(
    providerContext({ dir: ctx.dir, settings: { UpdateType: 'Local', Updates: { CurrentVersion: 'v7' } } }),
  );
  assert.is(provider.type, 'Local');
  assert.equal(await provider.check(null, live()), { available: true, revision: 'v7' });
  assert.equal(await provider.check('v6', live()), { available: true, revision: 'v7' });
  assert.equal(await provider.check('v7', live()), { available: false, revision: 'v7' });
  assert.is(await provider.apply('v6', live()), 'v7');
});

local('local :: without CurrentVersion, check says what to set', async (ctx) => {
  const provider = createLocalProvider(providerContext({ dir: ctx.dir, settings: { UpdateType: 'Local' } }));
  await rejects(provider.check(null, live()), /Updates\.CurrentVersion/);
});

local('local :: cvars name the client zip URL and its upper-case SHA-256', async (ctx) => {
  await mkdir(join(ctx.dir, 'binaries'));
  const content = Buffer.from('client zip bytes '.repeat(5000));
  await writeFile(join(ctx.dir, 'binaries', 'SS14.Client.zip'), content);
  const expected = createHash('sha256').update(content).digest('hex').toUpperCase();
  const provider = createLocalProvider(
    providerContext({
      dir: ctx.dir,
      key: 'alpha',
      publicBaseUrl: 'https://games.example/wd/',
      settings: { UpdateType: 'Local', Updates: { CurrentVersion: 'v1' } },
    }),
  );
  const cvars = await provider.launchCvars?.('v1');
  assert.equal(cvars, [
    ['build.download_url', 'https://games.example/wd/instances/alpha/binaries/SS14.Client.zip'],
    ['build.hash', expected],
  ]);
  assert.match(expected, /^[0-9A-F]{64}$/);

  // A changed file is hashed again.
  await writeFile(join(ctx.dir, 'binaries', 'SS14.Client.zip'), 'other, shorter');
  const again = await provider.launchCvars?.('v1');
  assert.is(again?.[1]?.[1], createHash('sha256').update('other, shorter').digest('hex').toUpperCase());
});

local('local :: the client zip is SS14.Client.zip unless Updates.ClientZip names another', async (ctx) => {
  await mkdir(join(ctx.dir, 'binaries'));
  await writeFile(join(ctx.dir, 'binaries', 'SS14.Client.zip'), 'default');
  await writeFile(join(ctx.dir, 'binaries', 'Game Client.zip'), 'b');
  const plain = createLocalProvider(
    providerContext({ dir: ctx.dir, settings: { UpdateType: 'Local', Updates: { CurrentVersion: 'v1' } } }),
  );
  const cvars = await plain.launchCvars?.('v1');
  assert.is(
    cvars?.[0]?.[1],
    'http://watchdog.example:5000/instances/alpha/binaries/SS14.Client.zip',
    'another zip beside it changes nothing',
  );
  assert.is(cvars?.[1]?.[1], createHash('sha256').update('default').digest('hex').toUpperCase());

  const chosen = createLocalProvider(
    providerContext({
      dir: ctx.dir,
      settings: { UpdateType: 'Local', Updates: { CurrentVersion: 'v1', ClientZip: 'Game Client.zip' } },
    }),
  );
  const named = await chosen.launchCvars?.('v1');
  assert.is(named?.[0]?.[1], 'http://watchdog.example:5000/instances/alpha/binaries/Game%20Client.zip');
  assert.is(named?.[1]?.[1], createHash('sha256').update('b').digest('hex').toUpperCase());

  const escaping = createLocalProvider(
    providerContext({
      dir: ctx.dir,
      settings: { UpdateType: 'Local', Updates: { CurrentVersion: 'v1', ClientZip: '../data.json' } },
    }),
  );
  await rejects(escaping.launchCvars?.('v1') ?? Promise.resolve(), /file name inside binaries/);
  const missing = createLocalProvider(
    providerContext({
      dir: ctx.dir,
      settings: { UpdateType: 'Local', Updates: { CurrentVersion: 'v1', ClientZip: 'nope.zip' } },
    }),
  );
  await rejects(missing.launchCvars?.('v1') ?? Promise.resolve(), /no such file.*Game Client\.zip, SS14\.Client\.zip/s);
});

local(
  'local :: a zip under another name is not taken for SS14.Client.zip; the error names it and ClientZip',
  async (ctx) => {
    await mkdir(join(ctx.dir, 'binaries'));
    await writeFile(join(ctx.dir, 'binaries', 'client.zip'), 'only one');
    const provider = createLocalProvider(
      providerContext({ dir: ctx.dir, settings: { UpdateType: 'Local', Updates: { CurrentVersion: 'v1' } } }),
    );
    await rejects(
      provider.launchCvars?.('v1') ?? Promise.resolve(),
      /as SS14\.Client\.zip, or name it with Updates\.ClientZip \(it holds client\.zip/,
    );
  },
);

local('local :: a missing binaries/ folder or zip is an UpdateError saying what to do', async (ctx) => {
  const provider = createLocalProvider(
    providerContext({ dir: ctx.dir, settings: { UpdateType: 'Local', Updates: { CurrentVersion: 'v1' } } }),
  );
  await rejects(provider.launchCvars?.('v1') ?? Promise.resolve(), /binaries\/ folder.*create it/s);
  await mkdir(join(ctx.dir, 'binaries'));
  await writeFile(join(ctx.dir, 'binaries', 'readme.txt'), 'not a zip');
  await rejects(provider.launchCvars?.('v1') ?? Promise.resolve(), /no client zip in .*SS14\.Client\.zip/);
  await rm(join(ctx.dir, 'binaries'), { recursive: true });
});

local.run();
