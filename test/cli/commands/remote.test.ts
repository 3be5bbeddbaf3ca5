import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type CliResult, runMain, spawnCli } from '../../_support/cli.ts';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { fixture, writeServerScript } from '../../_support/fixtures.ts';

/**
 * The CLI from another machine's point of view: run from an empty folder (no appsettings.yml), the daemon named by
 * WATCHDOG_URL, credentials only in the environment (never in a child's argv). The daemon has Admin configured, and
 * `demo` runs a fixture server printing "tick N" every 100 ms.
 */
interface Ctx {
  daemon?: RunningDaemon;
  empty: string;
  cleanup: () => Promise<void>;
}
const test = suite<Ctx>('watchdog CLI :: remote operators (no local config)', { empty: '', cleanup: async () => {} });

const ADMIN = 'boss:admin-pw';

test.before(async (ctx) => {
  try {
    const t = await tempDir('wd-cli-remote-');
    ctx.empty = t.path;
    ctx.cleanup = t.cleanup;
    const dir = await tempDir('wd-cli-remote-daemon-');
    const ticker = await writeServerScript(join(dir.path, 'ticker.sh'), fixture('log-starts.mjs'));
    ctx.daemon = await startDaemon(
      testConfig({
        extra: 'Admin:\n  Username: boss\n  Password: admin-pw',
        instances: [
          {
            key: 'demo',
            port: await freePort(),
            token: 'tok',
            runCommand: ticker,
            extra: '      EnvironmentVariables: { TICK_MS: "100" }',
          },
          { key: 'beta', port: await freePort(), token: 'tok-beta', runCommand: '/bin/false' },
        ],
      }),
      { dir: dir.path },
    );
    const prev = ctx.cleanup;
    ctx.cleanup = async () => {
      await prev();
      await dir.cleanup();
    };
  } catch (err) {
    console.error(err); // uvu swallows hook errors
    throw err;
  }
});
test.after(async (ctx) => {
  await ctx.daemon?.stop();
  await ctx.cleanup();
});

const d = (ctx: Ctx) => ctx.daemon!;
/** A command that has not finished after a minute hangs. */
const CLI_HANG_MS = 60_000;
/** The CLI in the empty folder with WATCHDOG_URL and the given environment. */
const remote = (ctx: Ctx, args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
  runMain(args, { cwd: ctx.empty, env: { WATCHDOG_URL: d(ctx).url, ...env }, timeoutMs: CLI_HANG_MS });
const ok = (r: CliResult) => assert.is(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
const serverLog = (ctx: Ctx) => join(d(ctx).dir, 'instances', 'demo', 'logs', 'server.log');
const ticks = (text: string) => [...text.matchAll(/^tick (\d+)$/gm)].map((m) => Number(m[1]));

test('remote :: status without a key and without a local config: every instance, with Admin credentials', async (ctx) => {
  const [table, json] = await Promise.all([
    remote(ctx, ['status'], { WATCHDOG_ADMIN: ADMIN }),
    remote(ctx, ['status', '--json'], { WATCHDOG_ADMIN: ADMIN }),
  ]);
  ok(table);
  assert.match(table.stdout, /^KEY +STATE/);
  assert.match(table.stdout, /\ndemo +\S+/);
  assert.match(table.stdout, /\nbeta +\S+/);
  ok(json);
  assert.equal(
    (JSON.parse(json.stdout) as { key: string }[]).map((s) => s.key),
    ['demo', 'beta'],
  );
  const one = await remote(ctx, ['status', 'demo', '--json'], { WATCHDOG_ADMIN: ADMIN });
  ok(one);
  assert.is((JSON.parse(one.stdout) as { key: string }).key, 'demo');
  assert.not.match(table.stdout + table.stderr + json.stderr, 'admin-pw');
});

test('remote :: status without a key: an instance token alone, or nothing, says a key or Admin credentials are needed (exit 2)', async (ctx) => {
  const needs =
    /watchdog status: listing every instance needs Admin credentials \(--user and --password, or WATCHDOG_ADMIN=user:password\)/;
  const [token, nothing, wrong] = await Promise.all([
    remote(ctx, ['status'], { WATCHDOG_TOKEN: 'tok' }),
    remote(ctx, ['status']),
    remote(ctx, ['status'], { WATCHDOG_ADMIN: 'boss:wrong-sekrit' }),
  ]);
  assert.is(token.code, 2, token.stderr);
  assert.match(token.stderr, needs);
  assert.match(token.stderr, /watchdog status <key>/);
  assert.is(token.stdout, '');
  assert.is(nothing.code, 2, nothing.stderr);
  assert.match(nothing.stderr, needs);
  assert.is(wrong.code, 1);
  assert.is(
    wrong.stderr,
    `watchdog status: 401: the user name and password were refused by the watchdog at ${d(ctx).url} (check --user and --password, or WATCHDOG_ADMIN; a login kept by watchdog login: log in again)\n`,
  );
  assert.not.match(wrong.stderr, 'sekrit');
});

test('remote :: logs -n N over WATCHDOG_URL: the last N lines, with the instance token or as Admin', async (ctx) => {
  await waitFor('ticks in server.log', async () => ticks(await readFile(serverLog(ctx), 'utf8')).length >= 5, 20_000);
  const [asToken, asAdmin] = await Promise.all([
    remote(ctx, ['logs', 'demo', '-n', '3'], { WATCHDOG_TOKEN: 'tok' }),
    remote(ctx, ['logs', 'demo', '-n', '2'], { WATCHDOG_ADMIN: ADMIN }),
  ]);
  ok(asToken);
  ok(asAdmin);
  const file = await readFile(serverLog(ctx), 'utf8');
  for (const [r, n] of [
    [asToken, 3],
    [asAdmin, 2],
  ] as const) {
    const printed = r.stdout.split('\n').slice(0, -1);
    assert.is(printed.length, n, r.stdout);
    assert.ok(file.includes(printed.join('\n') + '\n'), `consecutive lines of server.log: ${r.stdout}`);
  }
  const refused = await remote(ctx, ['logs', 'demo'], { WATCHDOG_TOKEN: 'wrong-sekrit' });
  assert.is(refused.code, 1);
  assert.is(
    refused.stderr,
    'watchdog logs: 401: the token for instance demo was refused (check --token, WATCHDOG_TOKEN or ApiToken)\n',
  );
  const none = await remote(ctx, ['logs', 'demo']);
  assert.is(none.code, 2);
  assert.match(none.stderr, /needs its token \(--token or WATCHDOG_TOKEN\) or Admin credentials/);
});

test('remote :: logs -f over --url: the tail, then new lines as the server prints them, each once, until SIGINT (exit 0)', async (ctx) => {
  const follow = spawnCli(['logs', 'demo', '-f', '-n', '2', '--url', d(ctx).url], {
    cwd: ctx.empty,
    env: { WATCHDOG_TOKEN: 'tok' },
  });
  try {
    await waitFor('ten followed lines', () => ticks(follow.stdout()).length >= 12, 20_000);
  } finally {
    if (follow.proc.pid) process.kill(follow.proc.pid, 'SIGINT');
  }
  const r = await follow.exited;
  assert.is(r.code, 0, r.stderr);
  const got = ticks(r.stdout);
  // The fixture counts up by one: a gap or a repeat means a line was lost or printed twice.
  for (let i = 1; i < got.length; i++) assert.is(got[i], got[i - 1]! + 1, `consecutive ticks: ${got.join(' ')}`);
  assert.is(r.stderr, '');
});

test('remote :: an unknown instance: the same message from every command, listing the instances', async (ctx) => {
  const message = 'no instance "nope" (instances: demo, beta)\n';
  const admin = { WATCHDOG_ADMIN: ADMIN };
  const here = (args: string[], env: Record<string, string> = {}) =>
    runMain(args, { cwd: d(ctx).dir, env: { WATCHDOG_URL: d(ctx).url, ...env }, timeoutMs: CLI_HANG_MS });
  const results: [string, CliResult][] = await Promise.all(
    [
      // From the daemon's folder: the local config knows the instances.
      ['restart', here(['restart', 'nope'])],
      ['stop', here(['stop', 'nope'])],
      ['logs', runMain(['logs', 'nope'], { cwd: d(ctx).dir, timeoutMs: CLI_HANG_MS })],
      // From elsewhere: the daemon's 404, then its list for Admin.
      ['update', remote(ctx, ['update', 'nope'], { WATCHDOG_TOKEN: 'tok', ...admin })],
      ['rollback', remote(ctx, ['rollback', 'nope'], { WATCHDOG_TOKEN: 'tok', ...admin })],
      ['status', remote(ctx, ['status', 'nope'], admin)],
      ['status', remote(ctx, ['status', 'nope'], { WATCHDOG_TOKEN: 'tok', ...admin })],
      ['logs', remote(ctx, ['logs', 'nope'], admin)],
      ['logs', remote(ctx, ['logs', 'nope', '-f'], admin)],
    ].map(async ([name, p]) => [name as string, await (p as Promise<CliResult>)]),
  );
  for (const [name, r] of results) {
    assert.is(r.stderr, `watchdog ${name}: ${message}`, `${name}: ${r.stderr}`);
    assert.is(r.code, 1, name);
    assert.is(r.stdout, '', name);
  }
});

test.run();
