import * as assert from 'uvu/assert';
import { oidcFingerprint } from '../../src/auth/oidc.ts';
import { createSessionStore, DEFAULT_SESSIONS } from '../../src/auth/sessions.ts';
import { loadConfig } from '../../src/config/load.ts';
import type { ResolvedConfig } from '../../src/config/resolved.ts';
import { hostOidc } from '../../src/daemon/oidc-host.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, writeFiles } from '../config/_support/files.ts';

/** The configuration `Users.Oidc` lines (none: off) resolve to, with its secret file read. */
async function configWith(dir: string, oidc: string[]): Promise<ResolvedConfig> {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance([], oidc.length === 0 ? [] : ['Users:', '  Oidc:', ...oidc.map((l) => `    ${l}`)]),
    'oidc-secret': 'secret-one\n',
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.config;
}

const provider = (issuer: string) => [
  `Issuer: ${issuer}`,
  'ClientId: watchdog',
  'ClientSecretFile: oidc-secret',
  'RedirectUrl: https://watchdog.example/login/oidc/callback',
];

const test = tempSuite('daemon :: single sign-on across a reload', { prefix: 'wd-oidchost-' });

test('oidc host :: a reload keeping the provider keeps its sessions; another provider, or none, ends them', async ({
  dir,
}) => {
  const first = await configWith(dir, provider('https://sso.example/realms/main'));
  assert.is(first.oidcClientSecret, 'secret-one', 'the secret is read from its file, its newline trimmed');
  let current = first;
  const sessions = createSessionStore(() => DEFAULT_SESSIONS);
  const host = hostOidc(() => current, sessions);
  assert.equal(host.login.link(), { name: 'single sign-on' });
  const fingerprint = oidcFingerprint(first.settings.Users.Oidc!);
  const sso = sessions.create({ kind: 'sso', name: 'alice', groups: ['mods'], fingerprint });
  const user = sessions.create({ kind: 'user', name: 'mo', fingerprint: 'hash' });

  current = await configWith(dir, provider('https://sso.example/realms/main'));
  host.reconfigured(current);
  assert.ok(sessions.peek(sso), 'the same provider: kept');

  current = await configWith(dir, provider('https://other.example/realms/main'));
  host.reconfigured(current);
  assert.is(sessions.peek(sso), undefined, 'another provider: ended');
  assert.ok(sessions.peek(user), 'a password login is not touched');

  const again = sessions.create({
    kind: 'sso',
    name: 'alice',
    groups: [],
    fingerprint: oidcFingerprint(current.settings.Users.Oidc!),
  });
  current = await configWith(dir, []);
  host.reconfigured(current);
  assert.is(sessions.peek(again), undefined, 'single sign-on turned off: ended');
  assert.is(host.login.link(), undefined, 'and the login page no longer offers it');
});

test.run();
