import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClientError } from '../../../src/cli/client/errors.ts';
import { basic } from '../../../src/cli/client/http.ts';
import { createTarget, type TargetOptions } from '../../../src/cli/client/target.ts';
import { testConfig } from '../../_support/config.ts';
import { tempDir } from '../../_support/env.ts';

interface Ctx {
  cwd: string;
  cleanup: () => Promise<void>;
  warnings: string[];
}
const test = suite<Ctx>('createTarget :: address and token from flags, environment and the local config', {
  cwd: '',
  cleanup: async () => {},
  warnings: [],
});

test.before.each(async (ctx) => {
  const t = await tempDir('wd-cli-target-');
  ctx.cwd = t.path;
  ctx.cleanup = t.cleanup;
  ctx.warnings = [];
});
test.after.each((ctx) => ctx.cleanup());

const config = (urls: string, extra = '') =>
  testConfig({
    instances: [
      { key: 'demo', port: 4001, token: 'from-config' },
      { key: 'beta', port: 4002, token: null, extra },
    ],
  }).replace('Urls: http://127.0.0.1:0', `Urls: ${urls}`);
const target = (ctx: Ctx, opts: Partial<TargetOptions> = {}) =>
  createTarget({ cwd: ctx.cwd, env: {}, warn: (m) => ctx.warnings.push(m), ...opts });
async function rejection(p: Promise<unknown>): Promise<ClientError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ClientError) return err;
    throw err;
  }
  throw new Error('expected a ClientError');
}

test('target :: no config at all: the default address, and flag or env tokens still work', async (ctx) => {
  assert.is(await target(ctx).url(), 'http://localhost:5000');
  assert.is(await target(ctx, { url: 'http://127.0.0.1:7/' }).url(), 'http://127.0.0.1:7');
  assert.is(await target(ctx, { token: 'flag' }).token('demo'), 'flag');
  assert.is(await target(ctx, { env: { WATCHDOG_TOKEN: 'env' } }).token('demo'), 'env');
  assert.equal(ctx.warnings, [], 'a missing appsettings.yml is not worth a warning');
});

test('target :: no token anywhere: exit 2, saying where a token can come from', async (ctx) => {
  const err = await rejection(target(ctx).token('demo'));
  assert.is(err.exitCode, 2);
  assert.match(err.message, /no token for instance demo: pass --token, set WATCHDOG_TOKEN/);
});

test('target :: Urls of the local config becomes the client address; --url wins', async (ctx) => {
  await writeFile(join(ctx.cwd, 'appsettings.yml'), config('http://*:5123'));
  assert.is(await target(ctx).url(), 'http://localhost:5123');
  assert.is(await target(ctx, { url: 'http://127.0.0.1:9' }).url(), 'http://127.0.0.1:9');
});

test('target :: token precedence: --token, then WATCHDOG_TOKEN, then the instance ApiToken', async (ctx) => {
  await writeFile(join(ctx.cwd, 'appsettings.yml'), config('http://*:5123'));
  assert.is(await target(ctx, { token: 'flag', env: { WATCHDOG_TOKEN: 'env' } }).token('demo'), 'flag');
  assert.is(await target(ctx, { env: { WATCHDOG_TOKEN: 'env' } }).token('demo'), 'env');
  assert.is(await target(ctx).token('demo'), 'from-config');
  assert.is(
    await target(ctx, { token: '', env: { WATCHDOG_TOKEN: '' } }).token('demo'),
    'from-config',
    'blank is unset',
  );
  // An instance without ApiToken has no token to offer; one the config does not know is unknown, its instances named.
  assert.is((await rejection(target(ctx).token('beta'))).exitCode, 2);
  const unknown = await rejection(target(ctx).token('nope'));
  assert.is(unknown.exitCode, 1);
  assert.is(unknown.message, 'no instance "nope" (instances: demo, beta)');
});

test('target :: WATCHDOG_URL sets the address when --url is not given, over the local Urls', async (ctx) => {
  await writeFile(join(ctx.cwd, 'appsettings.yml'), config('http://*:5123'));
  const env = { WATCHDOG_URL: 'http://127.0.0.1:8/' };
  assert.is(await target(ctx, { env }).url(), 'http://127.0.0.1:8');
  assert.ok(target(ctx, { env }).urlGiven);
  assert.is(await target(ctx, { env, url: 'http://127.0.0.1:9' }).url(), 'http://127.0.0.1:9');
  assert.not.ok(target(ctx).urlGiven);
  assert.is(await target(ctx, { env: { WATCHDOG_URL: '' } }).url(), 'http://localhost:5123', 'blank counts as unset');
});

test('target :: Admin credentials: --user/--password, else WATCHDOG_ADMIN split at the first colon; half given is exit 2', async (ctx) => {
  assert.is(target(ctx).admin(), undefined);
  const as = (user: string, password: string) => ({ authorization: basic(user, password) });
  assert.equal(target(ctx, { env: { WATCHDOG_ADMIN: 'boss:pa:ss' } }).admin(), as('boss', 'pa:ss'));
  assert.equal(target(ctx, { user: 'u', password: 'p', env: { WATCHDOG_ADMIN: 'boss:x' } }).admin(), as('u', 'p'));
  assert.equal(target(ctx, { user: 'other', env: { WATCHDOG_ADMIN: 'boss:x' } }).admin(), as('other', 'x'));
  for (const opts of [{ user: 'u' }, { password: 'p' }, { env: { WATCHDOG_ADMIN: 'no-colon' } }]) {
    let code: number | undefined;
    try {
      target(ctx, opts).admin();
    } catch (err) {
      code = err instanceof ClientError ? err.exitCode : undefined;
    }
    assert.is(code, 2, JSON.stringify(opts));
  }
});

test('target :: ApiTokenFile is read, trailing newline trimmed', async (ctx) => {
  await writeFile(join(ctx.cwd, 'beta.token'), 'from-file\n');
  await writeFile(join(ctx.cwd, 'appsettings.yml'), config('http://127.0.0.1:5123', '      ApiTokenFile: beta.token'));
  assert.is(await target(ctx).token('beta'), 'from-file');
  assert.is(await target(ctx).url(), 'http://127.0.0.1:5123');
});

test('target :: Urls with port 0: exit 2, pass --url', async (ctx) => {
  await writeFile(join(ctx.cwd, 'appsettings.yml'), config('http://127.0.0.1:0'));
  const err = await rejection(target(ctx).url());
  assert.is(err.exitCode, 2);
  assert.match(err.message, /port 0.*--url/);
});

test('target :: an invalid appsettings.yml in the folder: a warning, then the defaults', async (ctx) => {
  await writeFile(join(ctx.cwd, 'appsettings.yml'), 'Servers: [1, 2\n');
  assert.is(await target(ctx).url(), 'http://localhost:5000');
  assert.is(ctx.warnings.length, 1);
  assert.match(ctx.warnings[0]!, /going on without the local config: .*appsettings\.yml could not be read/);
});

test('target :: an explicit --config that cannot be used: exit 2 with its problems', async (ctx) => {
  const err = await rejection(target(ctx, { config: 'missing.yml' }).url());
  assert.is(err.exitCode, 2);
  assert.match(err.message, /--config could not be used:\n {2}.*missing\.yml/);
});

test('target :: config() for commands that need it: exit 2 naming the file', async (ctx) => {
  const err = await rejection(target(ctx).config('watchdog logs'));
  assert.is(err.exitCode, 2);
  assert.match(err.message, /watchdog logs needs the local config, and .*appsettings\.yml could not be read/);
  await writeFile(join(ctx.cwd, 'appsettings.yml'), config('http://*:5123'));
  assert.equal(
    (await target(ctx).config('x')).instances.map((i) => i.key),
    ['demo', 'beta'],
  );
});

test.run();
