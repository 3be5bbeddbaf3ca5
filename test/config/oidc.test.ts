import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { tempSuite } from '../_support/env.ts';
import { checkTop } from './_support/files.ts';

const oidc = tempSuite('config :: Users.Oidc, login through OpenID Connect', { prefix: 'wd-cfgoidc-' });

oidc('oidc :: bad settings exit 2 with one line each, naming the key', async ({ dir }) => {
  const r = await checkTop(
    dir,
    'bad.yml',
    ['check', '--config', 'bad.yml'],
    [
      'Users:',
      '  Oidc:',
      '    Issuer: http://sso.example/realms/main',
      '    ClientId: ""',
      '    ClientSecretFile: no-such-secret',
      '    RedirectUrl: https://watchdog.example/callback',
      '    Scopes: [profile]',
      '    UserClaim: "user name"',
    ],
  );
  assert.is(r.code, 2, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  const expected = [
    /^bad\.yml: Users\.Oidc\.Issuer: expected an https URL .*plain http only on 127\.0\.0\.1 or localhost.*, got "http:\/\/sso\.example\/realms\/main"$/,
    /^bad\.yml: Users\.Oidc\.ClientId: expected the client id/,
    /^bad\.yml: Users\.Oidc\.ClientSecretFile: expected a readable file holding the client secret \(.*no such file\)/,
    /^bad\.yml: Users\.Oidc\.RedirectUrl: expected this watchdog's public URL ending in \/login\/oidc\/callback/,
    /^bad\.yml: Users\.Oidc\.Scopes: expected a list of scopes that includes openid/,
    /^bad\.yml: Users\.Oidc\.UserClaim: expected a claim name/,
  ];
  assert.equal(expected.filter((e) => !lines.some((l) => e.test(l))).map(String), [], r.stderr);
});

oidc('oidc :: a good provider passes; the secret is read from its file and never printed', async ({ dir }) => {
  const secret = 'the-client-secret-0123456789';
  await writeFile(join(dir, 'oidc-secret'), `${secret}\n`, { mode: 0o600 });
  const r = await checkTop(
    dir,
    'appsettings.yml',
    ['check'],
    [
      'Users:',
      '  Oidc:',
      '    Issuer: https://sso.example/realms/main',
      '    ClientId: watchdog',
      '    ClientSecretFile: oidc-secret',
      '    RedirectUrl: https://watchdog.example/login/oidc/callback',
      '    Scopes: [openid, profile, groups]',
    ],
  );
  assert.is(r.code, 0, r.stderr);
  assert.not.ok(`${r.stdout}${r.stderr}`.includes(secret), 'the secret is not printed');
  // Plain http is fine for a provider on this machine (a test's).
  const local = await checkTop(
    dir,
    'appsettings.yml',
    ['check'],
    [
      'Users:',
      '  Oidc:',
      '    Issuer: http://127.0.0.1:9999',
      '    ClientId: watchdog',
      '    RedirectUrl: http://127.0.0.1:5000/login/oidc/callback',
    ],
  );
  assert.is(local.code, 0, local.stderr);
});

oidc.run();
