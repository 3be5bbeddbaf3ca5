import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { createLocalProvider } from '../../../src/updates/providers/local.ts';
import { providerContext } from '../../fixtures/git/context.ts';
import { type InstanceCtx, instanceSuite, never as live, rejects } from '../_support/instance-suite.ts';

/** A Local provider for the instance with these Updates settings (none: no Updates section at all). */
function localProvider(
  ctx: InstanceCtx,
  updates?: Record<string, unknown>,
  extra: { key?: string; publicBaseUrl?: string } = {},
) {
  const settings = updates ? { UpdateType: 'Local', Updates: updates } : { UpdateType: 'Local' };
  return createLocalProvider(providerContext({ dir: ctx.inst, settings, ...extra }));
}

/** The launch cvars for v1; a provider without launchCvars fails the test where a rejection is expected. */
const cvarsOf = (provider: ReturnType<typeof createLocalProvider>) => provider.launchCvars?.('v1') ?? Promise.resolve();

const upperSha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex').toUpperCase();

const local = instanceSuite('local', { instance: 'empty' });

local('local :: revision is Updates.CurrentVersion; apply adopts it', async (ctx) => {
  const provider = localProvider(ctx, { CurrentVersion: 'v7' });
  assert.is(provider.type, 'Local');
  assert.equal(await provider.check(null, live()), { available: true, revision: 'v7' });
  assert.equal(await provider.check('v6', live()), { available: true, revision: 'v7' });
  assert.equal(await provider.check('v7', live()), { available: false, revision: 'v7' });
  assert.is(await provider.apply('v6', live()), 'v7');
});

local('local :: without CurrentVersion, check says what to set', async (ctx) => {
  await rejects(localProvider(ctx).check(null, live()), /Updates\.CurrentVersion/);
});

local('local :: cvars name the client zip URL and its upper-case SHA-256', async (ctx) => {
  await mkdir(join(ctx.inst, 'binaries'));
  const content = Buffer.from('client zip bytes '.repeat(5000));
  await writeFile(join(ctx.inst, 'binaries', 'SS14.Client.zip'), content);
  const expected = upperSha(content);
  const provider = localProvider(
    ctx,
    { CurrentVersion: 'v1' },
    { key: 'alpha', publicBaseUrl: 'https://games.example/wd/' },
  );
  const cvars = await provider.launchCvars?.('v1');
  assert.equal(cvars, [
    ['build.download_url', 'https://games.example/wd/instances/alpha/binaries/SS14.Client.zip'],
    ['build.hash', expected],
  ]);
  assert.match(expected, /^[0-9A-F]{64}$/);

  // A changed file is hashed again.
  await writeFile(join(ctx.inst, 'binaries', 'SS14.Client.zip'), 'other, shorter');
  const again = await provider.launchCvars?.('v1');
  assert.is(again?.[1]?.[1], upperSha('other, shorter'));
});

local('local :: the client zip is SS14.Client.zip unless Updates.ClientZip names another', async (ctx) => {
  await mkdir(join(ctx.inst, 'binaries'));
  await writeFile(join(ctx.inst, 'binaries', 'SS14.Client.zip'), 'default');
  await writeFile(join(ctx.inst, 'binaries', 'Game Client.zip'), 'b');
  const cvars = await localProvider(ctx, { CurrentVersion: 'v1' }).launchCvars?.('v1');
  assert.is(
    cvars?.[0]?.[1],
    'http://watchdog.example:5000/instances/alpha/binaries/SS14.Client.zip',
    'another zip beside it changes nothing',
  );
  assert.is(cvars?.[1]?.[1], upperSha('default'));

  const named = await localProvider(ctx, { CurrentVersion: 'v1', ClientZip: 'Game Client.zip' }).launchCvars?.('v1');
  assert.is(named?.[0]?.[1], 'http://watchdog.example:5000/instances/alpha/binaries/Game%20Client.zip');
  assert.is(named?.[1]?.[1], upperSha('b'));

  await rejects(
    cvarsOf(localProvider(ctx, { CurrentVersion: 'v1', ClientZip: '../data.json' })),
    /file name inside binaries/,
  );
  await rejects(
    cvarsOf(localProvider(ctx, { CurrentVersion: 'v1', ClientZip: 'nope.zip' })),
    /no such file.*Game Client\.zip, SS14\.Client\.zip/s,
  );
});

local(
  'local :: a zip under another name is not taken for SS14.Client.zip; the error names it and ClientZip',
  async (ctx) => {
    await mkdir(join(ctx.inst, 'binaries'));
    await writeFile(join(ctx.inst, 'binaries', 'client.zip'), 'only one');
    await rejects(
      cvarsOf(localProvider(ctx, { CurrentVersion: 'v1' })),
      /as SS14\.Client\.zip, or name it with Updates\.ClientZip \(it holds client\.zip/,
    );
  },
);

local('local :: a missing binaries/ folder or zip is an UpdateError saying what to do', async (ctx) => {
  const provider = localProvider(ctx, { CurrentVersion: 'v1' });
  await rejects(cvarsOf(provider), /binaries\/ folder.*create it/s);
  await mkdir(join(ctx.inst, 'binaries'));
  await writeFile(join(ctx.inst, 'binaries', 'readme.txt'), 'not a zip');
  await rejects(cvarsOf(provider), /no client zip in .*SS14\.Client\.zip/);
  await rm(join(ctx.inst, 'binaries'), { recursive: true });
});

local.run();
