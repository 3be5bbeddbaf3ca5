import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hashApiKey } from '../../src/auth/api-keys.ts';
import { parseUsers, readUsersFile } from '../../src/auth/users-file.ts';
import { fastHash } from './_support/hash.ts';

const test = suite('auth :: users file');

const problemsOf = (text: string): string[] => {
  const r = parseUsers(text, 'conf/users.yml');
  return r.ok ? [] : r.problems;
};

test('users file :: an empty or absent section is no accounts', () => {
  for (const text of ['', '# nothing\n', 'Users: {}\n', 'Roles: {}\nUsers: {}\nKeys: {}\n']) {
    const r = parseUsers(text, 'users.yml');
    assert.ok(r.ok, text);
    if (r.ok) assert.is(r.db.users.size + r.db.keys.size, 0);
  }
});

test('users file :: a plain-text password is refused, naming the file and the user, never echoing it', async () => {
  const ok = await fastHash('pw-123456');
  const problems = problemsOf(`Users:\n  alice:\n    Password: hunter2-secret\n  bob:\n    Password: "${ok}"\n`);
  assert.is(problems.length, 1, problems.join('\n'));
  assert.match(problems[0]!, /^conf\/users\.yml: Users\.alice\.Password: expected a scrypt hash/);
  assert.not.match(problems[0]!, /hunter2/);
});

test('users file :: unknown roles and permissions are each named, with the file and the user, role or key', async () => {
  const h = await fastHash('pw-123456');
  const problems = problemsOf(
    [
      'Roles:',
      '  cdn: [control.updat]',
      '  admin: [status.read]',
      'Users:',
      '  alice:',
      `    Password: "${h}"`,
      '    Roles: [moderatr@a, viewer@bad/key, cdn]',
      'Keys:',
      '  k1:',
      '    User: alice',
      `    Hash: "${hashApiKey('x')}"`,
      '    Permissions: [status.reed, hold@a]',
      '    Expires: tomorrow',
      '',
    ].join('\n'),
  );
  const expect = [
    /conf\/users\.yml: Roles\.cdn\[0\]: expected a permission .*got "control\.updat"/,
    /conf\/users\.yml: Roles\.admin: expected a new role name/,
    /conf\/users\.yml: Users\.alice\.Roles\[0\]: expected a role .*got "moderatr@a"/,
    /conf\/users\.yml: Users\.alice\.Roles\[1\]: expected an instance id after "@", got "bad\/key"/,
    /conf\/users\.yml: Keys\.k1\.Permissions\[0\]: expected a permission .*got "status\.reed"/,
    /conf\/users\.yml: Keys\.k1\.Expires: expected an ISO date/,
  ];
  assert.is(problems.length, expect.length, problems.join('\n'));
  for (const re of expect)
    assert.ok(
      problems.some((p) => re.test(p)),
      `${re}\n${problems.join('\n')}`,
    );
});

test('users file :: a duplicate user is refused, naming the line and the user', async () => {
  const h = await fastHash('pw-123456');
  const problems = problemsOf(`Users:\n  bob:\n    Password: "${h}"\n  bob:\n    Password: "${h}"\n`);
  assert.is(problems.length, 1, problems.join('\n'));
  assert.match(problems[0]!, /^conf\/users\.yml:4:\d+: .*"bob" is named twice/);
});

test('users file :: a key whose user is gone is a warning, not a problem', async () => {
  const r = parseUsers(`Keys:\n  k1:\n    User: ghost\n    Hash: "${hashApiKey('x')}"\n`, 'users.yml');
  assert.ok(r.ok);
  if (r.ok) assert.match(r.warnings.join('\n'), /Keys\.k1: its user ghost does not exist/);
});

test('users file :: unknown keys and a wrong shape are named', () => {
  const problems = problemsOf('User: {}\nUsers:\n  - alice\n');
  assert.ok(
    problems.some((p) => /users\.yml: User: expected one of Roles, Users, Keys/.test(p)),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => /users\.yml: Users: expected a map/.test(p)),
    problems.join('\n'),
  );
});

test('users file :: Groups give rights by role; an unknown role in a group is named with its place', () => {
  const ok = parseUsers('Groups:\n  mods: [moderator@a]\n  all: [viewer]\n', 'users.yml');
  assert.ok(ok.ok);
  if (ok.ok) {
    assert.ok(ok.db.groups.get('mods')!.some((g) => g.permission === 'control.restart' && g.instance === 'a'));
    assert.equal(
      ok.db.groups.get('all')!.map((g) => g.instance),
      ['*', '*'],
    );
  }
  const problems = problemsOf('Groups:\n  mods: [moderater@a]\n  bad: admin\n');
  assert.ok(
    problems.some((p) => /users\.yml: Groups\.mods\[0\]: expected a role/.test(p)),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => /users\.yml: Groups\.bad: expected a list of role/.test(p)),
    problems.join('\n'),
  );
});

test('users file :: a named pipe in its place is a problem naming it, not a read that never ends', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'users-fifo-'));
  try {
    const file = join(dir, 'users.yml');
    execFileSync('mkfifo', [file]);
    // No writer ever opens the pipe: a plain read would wait for one for good.
    const r = await readUsersFile(file);
    assert.not.ok(r.ok);
    if (!r.ok) assert.match(r.problems.join('\n'), /users\.yml: cannot read the users file \(.*not a regular file/);
    const absent = await readUsersFile(join(dir, 'none.yml'));
    assert.ok(absent.ok && 'missing' in absent && absent.missing);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
