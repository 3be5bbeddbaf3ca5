/**
 * How a real watchdog's appsettings.yml is bound, under the real SS14.Watchdog and under ours (each in its own
 * folder, side by side, the same file but for the ports):
 * - keys written in lower case bind as in .NET (parity);
 * - an `ApiToken` containing `:`: the real watchdog splits `user:password` on every colon and answers 400, ours
 *   takes the password as everything after the first colon (deliberate);
 * - a .NET-style environment variable (`Servers__Instances__<key>__ApiToken`) next to the key in the YAML file:
 *   the real watchdog keeps the file's value, ours takes the variable's (deliberate, README "Configuration");
 * - `ApiTokenFile` whose file ends in a newline (as editors and `echo` write it): the real watchdog keeps the
 *   newline in the token, ours trims one (deliberate, src/config/checks.ts).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { freePort } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import { difference, postAs, SERILOG, sidesSuite } from './_support/peer.ts';

const SERVER = fixture('log-starts.mjs');

/** An instance of `key` as YAML: `token` is its token line, and `keys` spells its key names (lower case or not). */
async function instance(key: string, token: string, keys = (k: string) => k): Promise<string[]> {
  const p = await freePort();
  const args = JSON.stringify(['--cvar', `net.port=${p}`, '--cvar', 'watchdog.checkin_interval=0.3']);
  return [
    `    ${key}:`,
    `      ${token}`,
    `      ${keys('ApiPort')}: ${p}`,
    `      ${keys('RunCommand')}: ${JSON.stringify(SERVER)}`,
    `      ${keys('Arguments')}: ${args}`,
    `      ${keys('EnvironmentVariables')}: { FIXTURE_LIFETIME_MS: "60000" }`,
  ];
}

async function yaml(dir: string, urlsPort: number): Promise<string> {
  await writeFile(join(dir, 'token.txt'), 'file-secret\n');
  const lower = (k: string) => k.toLowerCase();
  return (
    [
      SERILOG,
      `Urls: http://localhost:${urlsPort}`,
      'Servers:',
      '  Instances:',
      ...(await instance('lower', 'apitoken: lower-token', lower)),
      ...(await instance('colon', 'ApiToken: "tok:en"')),
      ...(await instance('env', 'ApiToken: file-token')),
      ...(await instance('tokfile', `ApiTokenFile: ${JSON.stringify(join(dir, 'token.txt'))}`)),
    ].join('\n') + '\n'
  );
}

/**
 * Whether the credentials are taken, as a status code. The real watchdog has no status route, so it is asked for
 * an update (it has no provider here: a no-op); ours answers such an update with 409 at once after authorising
 * it, so ours is asked for the instance's status instead, which goes through the same authorisation.
 */
async function authAs(name: 'real' | 'ours', url: string, key: string, user: string, pass: string): Promise<number> {
  if (name === 'real') return postAs(`${url}/instances/${key}/update`, user, pass);
  const res = await fetch(`${url}/instances/${key}/status`, {
    headers: { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` },
    signal: AbortSignal.timeout(30_000),
  });
  await res.arrayBuffer();
  return res.status;
}

const test = sidesSuite('peer :: configuration binding, real vs ours', {
  prefix: 'wd-peer-config-',
  keys: ['lower', 'colon', 'env', 'tokfile'],
  side: async (_name, dir, urlsPort) => ({
    yaml: await yaml(dir, urlsPort),
    env: { Servers__Instances__env__ApiToken: 'env-token' },
    keep: {},
  }),
});

/** Bindings that differ on purpose: the passwords tried for `key`, what each watchdog answers, and the record. */
const DIFFERENCES = [
  {
    title: 'an ApiToken with a colon',
    key: 'colon',
    passwords: ['tok:en', 'tok:xx'],
    real: { codes: [400, 400], why: 'the real watchdog refuses any password with a colon as malformed' },
    ours: { codes: [200, 401], why: undefined },
    difference:
      'an ApiToken containing ":" is usable with ours; the real watchdog answers 400 to any Basic password with a colon',
  },
  {
    title: 'Servers__Instances__env__ApiToken in the environment vs ApiToken in the file',
    key: 'env',
    passwords: ['file-token', 'env-token'],
    real: { codes: [200, 401], why: 'the real watchdog: the YAML file wins' },
    ours: { codes: [401, 200], why: 'ours: the environment variable wins' },
    difference:
      'a .NET-style environment variable overrides the YAML file with ours; with the real watchdog the file wins',
  },
  {
    title: 'ApiTokenFile with a trailing newline',
    key: 'tokfile',
    passwords: ['file-secret', 'file-secret\n'],
    real: { codes: [401, 200], why: 'the real watchdog: the newline is part of the token' },
    ours: { codes: [200, 401], why: 'ours: one trailing newline trimmed' },
    difference:
      'ApiTokenFile: ours trims one trailing newline; the real watchdog keeps it in the token (only a client sending the newline gets in)',
  },
];

for (const name of ['real', 'ours'] as const) {
  test(`config :: ${name}: lower-case keys bind (apitoken, apiport, runcommand, arguments)`, async (ctx) => {
    const side = ctx.sides[name]!.run;
    assert.is(await authAs(name, side.url, 'lower', 'lower', 'lower-token'), 200);
    assert.is(await authAs(name, side.url, 'lower', 'lower', 'wrong'), 401);
  });

  for (const c of DIFFERENCES) {
    test(`config :: ${name}: ${c.title}`, async (ctx) => {
      const side = ctx.sides[name]!.run;
      const codes: number[] = [];
      for (const password of c.passwords) codes.push(await authAs(name, side.url, c.key, c.key, password));
      assert.equal(codes, c[name].codes, c[name].why);
      if (name === 'ours') difference(c.difference);
    });
  }
}

test.run();
