import * as assert from 'uvu/assert';
import { tempSuite } from '../_support/env.ts';
import { checkTop } from './_support/files.ts';

const users = tempSuite('config :: Users, the login settings', { prefix: 'wd-cfgusers-' });

users('users :: bad session and login settings exit 2 with one clear line each', async ({ dir }) => {
  const r = await checkTop(
    dir,
    'bad.yml',
    ['check', '--config', 'bad.yml'],
    [
      'Users:',
      '  SessionMinutes: 0',
      '  SessionIdleMinutes: soon',
      '  MaxSessions: 0',
      '  LoginAttemptsPerMinute: 2.5',
      '  LoginLockoutMaxSeconds: -1',
      '  SessionSeconds: 5',
    ],
  );
  assert.is(r.code, 2, r.stderr);
  const expected = [
    'bad.yml: Users.SessionMinutes: expected a positive number of minutes, got 0',
    'bad.yml: Users.SessionIdleMinutes: expected a number of minutes, got "soon"',
    'bad.yml: Users.MaxSessions: expected at least 1 session, got 0',
    'bad.yml: Users.LoginAttemptsPerMinute: expected a whole number of attempts, got 2.5',
    'bad.yml: Users.LoginLockoutMaxSeconds: expected a positive number of seconds, got -1',
  ];
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(
    expected.filter((e) => !lines.includes(e)),
    [],
    r.stderr,
  );
  assert.ok(
    lines.some((l) => l.startsWith('bad.yml: Users.SessionSeconds:')),
    'an unknown key is named',
  );
});

users('users :: the defaults pass, and good values are accepted', async ({ dir }) => {
  const r = await checkTop(
    dir,
    'appsettings.yml',
    ['check'],
    [
      'Users:',
      '  SessionMinutes: 0.5',
      '  SessionIdleMinutes: 10',
      '  MaxSessions: 5',
      '  LoginAttemptsPerMinute: 1',
      '  LoginFailuresBeforeLockout: 0',
      '  LoginLockoutSeconds: 1',
      '  LoginLockoutMaxSeconds: 1',
    ],
  );
  assert.is(r.code, 0, r.stderr);
});

users.run();
