/**
 * How a real watchdog's appsettings.yml is bound, under the real SS14.Watchdog and under ours (each in its own
 * folder, side by side, the same file but for the ports):
 * - keys written in lower case bind as in .NET (parity);
 * - an `ApiToken` containing `:`: the real watchdog splits `user:password` on every colon and answers 400, ours
 *   takes the password as everything after the first colon (deliberate);
 * - a .NET-style environment variable (`Servers__Instances__<key>__ApiToken`) next to the key in the YAML file:
 *   the real watchdog keeps the file's value, ours takes the variable's (deliberate, README "Configuration");
 * - `ApiTokenFile` whose file ends in a newline (as editors and `echo` write it): the real watchdog keeps the
 *   newline in the token, ours trims one (deliberate, src/config/secret-file.ts).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort, tempDir } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import {
  difference,
  killPid,
  peerAvailable,
  peerProgram,
  pidsWith,
  postAs,
  SERILOG,
  startSide,
  type RunningSide,
  type SideName,
} from './_peer.ts';

interface Ctx {
  sides: Partial<Record<SideName, RunningSide>>;
  dirs: Array<{ path: string; cleanup: () => Promise<void> }>;
}

const SERVER = fixture('log-starts.mjs');

async function yaml(dir: string, urlsPort: number): Promise<string> {
  const [p1, p2, p3, p4] = [await freePort(), await freePort(), await freePort(), await freePort()];
  await writeFile(join(dir, 'token.txt'), 'file-secret\n');
  const args = (p: number) => JSON.stringify(['--cvar', `net.port=${p}`, '--cvar', 'watchdog.checkin_interval=0.3']);
  return (
    [
      SERILOG,
      `Urls: http://localhost:${urlsPort}`,
      'Servers:',
      '  Instances:',
      '    lower:',
      '      apitoken: lower-token',
      `      apiport: ${p1}`,
      `      runcommand: ${JSON.stringify(SERVER)}`,
      `      arguments: ${args(p1)}`,
      '      environmentvariables: { FIXTURE_LIFETIME_MS: "60000" }',
      '    colon:',
      '      ApiToken: "tok:en"',
      `      ApiPort: ${p2}`,
      `      RunCommand: ${JSON.stringify(SERVER)}`,
      `      Arguments: ${args(p2)}`,
      '      EnvironmentVariables: { FIXTURE_LIFETIME_MS: "60000" }',
      '    env:',
      '      ApiToken: file-token',
      `      ApiPort: ${p3}`,
      `      RunCommand: ${JSON.stringify(SERVER)}`,
      `      Arguments: ${args(p3)}`,
      '      EnvironmentVariables: { FIXTURE_LIFETIME_MS: "60000" }',
      '    tokfile:',
      `      ApiTokenFile: ${JSON.stringify(join(dir, 'token.txt'))}`,
      `      ApiPort: ${p4}`,
      `      RunCommand: ${JSON.stringify(SERVER)}`,
      `      Arguments: ${args(p4)}`,
      '      EnvironmentVariables: { FIXTURE_LIFETIME_MS: "60000" }',
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
    signal: AbortSignal.timeout(5000),
  });
  await res.arrayBuffer();
  return res.status;
}

const test = suite<Ctx>('peer :: configuration binding, real vs ours', { sides: {}, dirs: [] });

test.before(async (ctx) => {
  await peerProgram();
  await Promise.all(
    (['real', 'ours'] as const).map(async (name) => {
      const dir = await tempDir(`wd-peer-config-${name}-`);
      ctx.dirs.push(dir);
      const port = await freePort();
      ctx.sides[name] = await startSide(name, dir.path, await yaml(dir.path, port), port, {
        Servers__Instances__env__ApiToken: 'env-token',
      });
    }),
  );
});

test.after(async (ctx) => {
  for (const side of Object.values(ctx.sides)) await side.stop();
  for (const dir of ctx.dirs) {
    for (const key of ['lower', 'colon', 'env', 'tokfile'])
      for (const pid of await pidsWith(join(dir.path, 'instances', key, 'config.toml'))) killPid(pid);
    await dir.cleanup();
  }
});

for (const name of ['real', 'ours'] as const) {
  test(`${name}: lower-case keys bind (apitoken, apiport, runcommand, arguments)`, async (ctx) => {
    const side = ctx.sides[name]!;
    assert.is(await authAs(name, side.url, 'lower', 'lower', 'lower-token'), 200);
    assert.is(await authAs(name, side.url, 'lower', 'lower', 'wrong'), 401);
  });

  test(`${name}: an ApiToken with a colon`, async (ctx) => {
    const side = ctx.sides[name]!;
    const right = await authAs(name, side.url, 'colon', 'colon', 'tok:en');
    const wrong = await authAs(name, side.url, 'colon', 'colon', 'tok:xx');
    if (name === 'real')
      assert.equal([right, wrong], [400, 400], 'the real watchdog refuses any password with a colon as malformed');
    else {
      assert.equal([right, wrong], [200, 401]);
      difference(
        'an ApiToken containing ":" is usable with ours; the real watchdog answers 400 to any Basic password with a colon',
      );
    }
  });

  test(`${name}: Servers__Instances__env__ApiToken in the environment vs ApiToken in the file`, async (ctx) => {
    const side = ctx.sides[name]!;
    const file = await authAs(name, side.url, 'env', 'env', 'file-token');
    const env = await authAs(name, side.url, 'env', 'env', 'env-token');
    if (name === 'real') assert.equal([file, env], [200, 401], 'the real watchdog: the YAML file wins');
    else {
      assert.equal([file, env], [401, 200], 'ours: the environment variable wins');
      difference(
        'a .NET-style environment variable overrides the YAML file with ours; with the real watchdog the file wins',
      );
    }
  });

  test(`${name}: ApiTokenFile with a trailing newline`, async (ctx) => {
    const side = ctx.sides[name]!;
    const bare = await authAs(name, side.url, 'tokfile', 'tokfile', 'file-secret');
    const withNewline = await authAs(name, side.url, 'tokfile', 'tokfile', 'file-secret\n');
    if (name === 'real')
      assert.equal([bare, withNewline], [401, 200], 'the real watchdog: the newline is part of the token');
    else {
      assert.equal([bare, withNewline], [200, 401], 'ours: one trailing newline trimmed');
      difference(
        'ApiTokenFile: ours trims one trailing newline; the real watchdog keeps it in the token (only a client sending the newline gets in)',
      );
    }
  });
}

if (peerAvailable) test.run();
