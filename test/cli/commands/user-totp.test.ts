/**
 * `watchdog user totp` writes a new secret to users.yml and prints it once with its otpauth:// URI, `--disable`
 * removes it, and `watchdog check` names the user of a malformed one without showing it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { isTotpSecret } from '../../../src/auth/totp.ts';
import { cliSuite, runMain } from '../../_support/cli.ts';
import { testConfig } from '../../_support/config.ts';
import { fastHash } from '../../auth/_support/hash.ts';

const test = cliSuite('watchdog user totp', 'wd-cli-totp-');

const totpOf = async (cwd: string, name: string) =>
  (parse(await readFile(join(cwd, 'users.yml'), 'utf8')) as { Users: Record<string, { Totp?: string }> }).Users[name]
    ?.Totp;

test.before(async ({ cwd }) => {
  await writeFile(
    join(cwd, 'appsettings.yml'),
    testConfig({ instances: [{ key: 'a', port: 4302, runCommand: '/nonexistent' }] }),
  );
  const h = await fastHash('pw-12345678');
  await writeFile(join(cwd, 'users.yml'), `Users:\n  mo:\n    Password: "${h}"\n    Roles: [viewer]\n`, {
    mode: 0o600,
  });
});

test('user totp :: a new secret is written and printed once, with its otpauth URI', async ({ cwd }) => {
  const r = await runMain(['user', 'totp', 'mo'], { cwd });
  assert.is(r.code, 0, r.stderr);
  const secret = await totpOf(cwd, 'mo');
  assert.ok(secret !== undefined && isTotpSecret(secret), String(secret));
  const [uri, line] = r.stdout.trim().split('\n');
  const url = new URL(uri ?? '');
  assert.is(url.protocol, 'otpauth:');
  assert.is(url.searchParams.get('secret'), secret);
  assert.is(line, `secret: ${secret}`);
  assert.match(r.stderr, /shown this once/);
  const list = await runMain(['user', 'list'], { cwd });
  assert.match(list.stdout, /^mo\t.*\ttotp: on$/m);
  assert.not.match(list.stdout, new RegExp(secret ?? '-'), 'list never shows the secret');
  const again = await runMain(['user', 'totp', 'mo'], { cwd });
  assert.is(again.code, 0);
  assert.is.not(await totpOf(cwd, 'mo'), secret, 'enrolling again makes a new secret');
});

test('user totp --disable :: removes the secret; an unknown user is refused', async ({ cwd }) => {
  const r = await runMain(['user', 'totp', 'mo', '--disable'], { cwd });
  assert.is(r.code, 0, r.stderr);
  assert.is(await totpOf(cwd, 'mo'), undefined);
  assert.is((await runMain(['user', 'totp', 'mo', '--disable'], { cwd })).code, 1, 'none to remove');
  const nobody = await runMain(['user', 'totp', 'nobody'], { cwd });
  assert.is(nobody.code, 1);
  assert.match(nobody.stderr, /no user nobody/);
});

test('check :: a malformed Totp exits 2 naming the user, never the value', async ({ cwd }) => {
  const h = await fastHash('pw-12345678');
  await writeFile(join(cwd, 'users.yml'), `Users:\n  mo:\n    Password: "${h}"\n    Totp: abc-secret-1\n`);
  const r = await runMain(['check'], { cwd });
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /users\.yml: Users\.mo\.Totp: expected a base32 secret/);
  assert.not.match(r.stderr, /abc-secret-1/);
});

test.run();
