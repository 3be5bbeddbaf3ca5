import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { type CliResult, cliEnv, runCli, spawnCli, WATCHDOG } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { type DaemonCtx, daemonSuite, waitState } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { metricValue } from '../_support/metric-value.ts';

/**
 * Every CLI command, run as a real process against the real daemon hosting real demo servers:
 * demo and beta (each with its own ApiToken) and gamma (no ApiToken, a program that exits at once).
 */
const test = daemonSuite('watchdog CLI :: end to end against the running daemon', {
  config: async () =>
    testConfig({
      instances: [
        { key: 'demo', port: await freePort(), token: 'tok', timeoutSeconds: 3 },
        { key: 'beta', port: await freePort(), token: 'tok-beta', timeoutSeconds: 3 },
        { key: 'gamma', port: await freePort(), token: null, runCommand: '/bin/false' },
      ],
    }),
});
type Ctx = DaemonCtx;

const ESC = '\x1b';
const d = (ctx: Ctx) => ctx.daemon!;
/**
 * The CLI run from the daemon's folder, so the local appsettings.yml is the daemon's own. Several run at once beside
 * the daemon and its servers: on a loaded machine one can take longer than runCli's 20 s; 60 s only catches a hang.
 */
const cli = (ctx: Ctx, args: string[], env?: Record<string, string>): Promise<CliResult> =>
  runCli(args, { cwd: d(ctx).dir, env, timeoutMs: CLI_HANG_MS });
const CLI_HANG_MS = 60_000;
const withUrl = (ctx: Ctx, ...args: string[]) => [...args, '--url', d(ctx).url];
const tokenOf = (key: string) => (key === 'demo' ? 'tok' : 'tok-beta');
const running = (ctx: Ctx, key: string, notPid?: number | null) =>
  waitState(d(ctx), key, tokenOf(key), 'server.running', { notPid, timeoutMs: 20_000 });
const ok = (r: CliResult) => assert.is(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);

test('end-to-end :: status <key>: the table, tokens from the local config, no colour through a pipe', async (ctx) => {
  const before = await running(ctx, 'demo');
  const r = await cli(ctx, withUrl(ctx, 'status', 'demo'));
  ok(r);
  const [header, row, ...rest] = r.stdout.trimEnd().split('\n');
  assert.match(
    header!,
    /^KEY +STATE +REVISION +PID +UPTIME +CPU +MEM +PLAYERS +LAST CHECK-IN +RESTARTS +FAILURES +LAST EXIT$/,
  );
  assert.equal(rest, []);
  assert.match(
    row!,
    new RegExp(
      `^demo +server\\.running +\\S+ +${before.pid} +\\d+[smh].* +(\\d+(\\.\\d)?%|-) +(\\d+(\\.\\d)? [kMG]B|-) +(\\d+|-) +\\d+s ago +\\d+ +0 +(-|\\w+ \\(.*\\) .* ago)$`,
    ),
  );
  assert.not.ok(r.stdout.includes(ESC), 'no escape codes when stdout is not a TTY');
});

test('end-to-end :: status --json: the status object; without a key, every instance with its own token', async (ctx) => {
  await running(ctx, 'beta');
  const [one, all, table] = await Promise.all([
    cli(ctx, withUrl(ctx, 'status', 'demo', '--json')),
    cli(ctx, withUrl(ctx, 'status', '--json')),
    cli(ctx, withUrl(ctx, 'status')),
  ]);
  ok(one);
  const s = JSON.parse(one.stdout) as Record<string, unknown>;
  assert.is(s.key, 'demo');
  assert.is(s.state, 'server.running');
  assert.type(s.pid, 'number');
  for (const field of [
    'name',
    'revision',
    'lastCheckinAt',
    'startedAt',
    'startupFailures',
    'restarts',
    'updatePending',
    'stopRequested',
  ]) {
    assert.ok(field in s, `status JSON has ${field}`);
  }
  // gamma has no ApiToken anywhere: its row is missing, the others are shown, and the exit says so.
  assert.is(all.code, 2, all.stderr);
  const list = JSON.parse(all.stdout) as Array<{ key: string; state: string }>;
  assert.equal(
    list.map((x) => x.key),
    ['demo', 'beta'],
  );
  assert.match(all.stderr, /no token for instance gamma/);
  assert.is(table.code, 2);
  assert.match(table.stdout, /\ndemo +server\.running/);
  assert.match(table.stdout, /\nbeta +server\.running/);
});

const TTY_TEST = 'status on a terminal: states coloured; NO_COLOR turns colour off';
const hasScript = spawnSync('script', ['--version']).status === 0;
if (!hasScript) console.log(`skipped "${TTY_TEST}": script(1) is not installed, no pseudo-terminal to run the CLI on`);
(hasScript ? test : test.skip)(TTY_TEST, async (ctx) => {
  const onTty = (env: Record<string, string>) => {
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(WATCHDOG)} status demo --url ${d(ctx).url}`;
    return spawnSync('script', ['-qec', command, '/dev/null'], {
      cwd: d(ctx).dir,
      env: cliEnv(env),
      encoding: 'utf8',
      timeout: 20_000,
    });
  };
  const coloured = onTty({});
  assert.is(coloured.status, 0, coloured.stdout);
  assert.ok(
    coloured.stdout.includes(`${ESC}[32mserver.running${ESC}[39m`),
    `green running in ${JSON.stringify(coloured.stdout)}`,
  );
  const plain = onTty({ NO_COLOR: '1' });
  assert.is(plain.status, 0);
  assert.match(plain.stdout, /demo +server\.running/);
  assert.not.ok(plain.stdout.includes(ESC), 'NO_COLOR: no escape codes');
});

test('end-to-end :: restart: exit 0, and the server comes back with a new pid', async (ctx) => {
  const before = await running(ctx, 'demo');
  const r = await cli(ctx, withUrl(ctx, 'restart', 'demo'));
  ok(r);
  assert.is(r.stdout, `restart requested for demo at ${d(ctx).url}\n`);
  const after = await running(ctx, 'demo', before.pid);
  assert.ok(after.restarts >= before.restarts);
});

test('end-to-end :: update without an update provider: exit 1 naming the reason (409), and the instance runs on', async (ctx) => {
  const before = await running(ctx, 'demo');
  const r = await cli(ctx, withUrl(ctx, 'update', 'demo', '--json'));
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /update refused for instance demo: no update provider/);
  await waitFor('the refusal logged', () => /control update refused: no update provider/.test(d(ctx).log()));
  assert.is((await running(ctx, 'demo')).pid, before.pid);
});

test('end-to-end :: stop: exit 0, the state becomes stopped.idle; restart brings it back', async (ctx) => {
  const before = await running(ctx, 'demo');
  ok(await cli(ctx, withUrl(ctx, 'stop', 'demo')));
  await waitState(d(ctx), 'demo', 'tok', 'stopped.idle', { timeoutMs: 20_000 });
  const r = await cli(ctx, withUrl(ctx, 'status', 'demo', '--json'));
  ok(r);
  const s = JSON.parse(r.stdout) as { state: string; pid: number | null };
  assert.is(s.state, 'stopped.idle');
  assert.is(s.pid, null);
  ok(await cli(ctx, withUrl(ctx, 'restart', 'demo')));
  const back = await running(ctx, 'demo');
  assert.is.not(back.pid, before.pid);
});

test('end-to-end :: logs -n N: the last N lines of the server log', async (ctx) => {
  await running(ctx, 'demo');
  const logFile = join(d(ctx).dir, 'instances', 'demo', 'logs', 'server.log');
  await waitFor('some server output', async () => (await readFile(logFile, 'utf8')).split('\n').length > 3);
  const r = await cli(ctx, ['logs', 'demo', '-n', '3']);
  ok(r);
  const printed = r.stdout.split('\n').slice(0, -1);
  assert.is(printed.length, 3, r.stdout);
  // The log may have grown since; the three lines are still there, in order, one after another.
  const file = (await readFile(logFile, 'utf8')).split('\n');
  const at = file.indexOf(printed[0]!);
  assert.ok(at >= 0, 'first line is in server.log');
  assert.equal(file.slice(at, at + 3), printed);
});

test('end-to-end :: logs -f: new server output streams until the CLI is stopped (killed by pid, exit 0)', async (ctx) => {
  const before = await running(ctx, 'demo');
  const follow = spawnCli(['logs', 'demo', '-f', '-n', '0'], { cwd: d(ctx).dir });
  try {
    // Once it holds server.log open (its position taken at the end), make the server write: a restart logs its
    // shutdown and start. A fixed pause here lost the lines when the CLI started slowly on a loaded machine.
    const pid = follow.proc.pid ?? 0;
    await waitFor(
      'the follower to open server.log',
      () =>
        readdirSync(`/proc/${pid}/fd`).some((fd) => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`).endsWith(join('instances', 'demo', 'logs', 'server.log'));
          } catch {
            return false; // closed between the listing and the look
          }
        }),
      20_000,
    );
    assert.is(await d(ctx).control('demo', 'tok', 'restart'), 200);
    await running(ctx, 'demo', before.pid);
    await waitFor('lines from the restart', () => follow.stdout().split('\n').length > 3, 10_000);
  } finally {
    if (follow.proc.pid) process.kill(follow.proc.pid, 'SIGINT');
  }
  const r = await follow.exited;
  assert.is(r.code, 0, r.stderr);
  const logDir = join(d(ctx).dir, 'instances', 'demo', 'logs');
  const all =
    (await readFile(join(logDir, 'server.log'), 'utf8')) +
    (existsSync(join(logDir, 'server.log.1')) ? await readFile(join(logDir, 'server.log.1'), 'utf8') : '');
  for (const line of r.stdout.split('\n').slice(0, -1))
    assert.ok(all.includes(line), `followed line is in the log: ${line}`);
});

test('end-to-end :: status --watch: redraws every interval, stops after --count or on SIGINT', async (ctx) => {
  await running(ctx, 'demo');
  const counted = await cli(ctx, withUrl(ctx, 'status', 'demo', '--watch', '--interval', '0.2', '--count', '3'));
  ok(counted);
  assert.is(counted.stdout.match(/^KEY/gm)?.length, 3);
  const watching = spawnCli(withUrl(ctx, 'status', 'demo', '--watch', '--json', '--interval', '0.2'), {
    cwd: d(ctx).dir,
  });
  try {
    await waitFor('two redraws', () => watching.stdout().split('\n').length > 2, 10_000);
  } finally {
    if (watching.proc.pid) process.kill(watching.proc.pid, 'SIGINT');
  }
  const r = await watching.exited;
  assert.is(r.code, 0, r.stderr);
  for (const line of r.stdout.trimEnd().split('\n')) assert.is((JSON.parse(line) as { key: string }).key, 'demo');
});

test('end-to-end :: the address from the local Urls (http://*:port → localhost), no --url or --token', async (ctx) => {
  const port = new URL(d(ctx).url).port;
  const dir = join(d(ctx).dir, 'operator');
  await mkdir(dir);
  const yaml = testConfig({ instances: [{ key: 'demo', port: 4999, token: 'tok' }] }).replace(
    'Urls: http://127.0.0.1:0',
    `Urls: http://*:${port}`,
  );
  await writeFile(join(dir, 'appsettings.yml'), yaml);
  const r = await runCli(['status', 'demo'], { cwd: dir, timeoutMs: CLI_HANG_MS });
  ok(r);
  assert.match(r.stdout, /\ndemo +server\.running/);
});

test('end-to-end :: wrong token: exit 1 with the 401 message, the token never printed; --token beats WATCHDOG_TOKEN beats the config', async (ctx) => {
  const [flag, env, action, flagWins] = await Promise.all([
    cli(ctx, withUrl(ctx, 'status', 'demo', '--token', 'wrong-sekrit')),
    cli(ctx, withUrl(ctx, 'status', 'demo'), { WATCHDOG_TOKEN: 'wrong-sekrit' }),
    cli(ctx, withUrl(ctx, 'restart', 'demo', '--token', 'wrong-sekrit')),
    cli(ctx, withUrl(ctx, 'status', 'demo', '--json', '--token', 'tok'), { WATCHDOG_TOKEN: 'wrong-sekrit' }),
  ]);
  const message =
    'watchdog status: 401: the token for instance demo was refused (check --token, WATCHDOG_TOKEN or ApiToken)\n';
  assert.is(flag.code, 1);
  assert.is(flag.stderr, message);
  assert.is(env.code, 1, 'WATCHDOG_TOKEN is used before the config token');
  assert.is(env.stderr, message);
  assert.is(action.code, 1);
  assert.is(action.stderr, message.replace('watchdog status', 'watchdog restart'));
  for (const r of [flag, env, action]) assert.not.ok((r.stdout + r.stderr).includes('sekrit'), 'token not printed');
  ok(flagWins);
  assert.is((JSON.parse(flagWins.stdout) as { key: string }).key, 'demo');
});

test('end-to-end :: wrong token for update and stop: exit 1 with the 401 message; the refused stop leaves the instance running', async (ctx) => {
  const before = await running(ctx, 'demo');
  const count = (re: RegExp) => d(ctx).log().match(re)?.length ?? 0;
  const acceptedBefore = count(/control (update|stop) accepted/g);
  const refused = async () =>
    (await metricValue(d(ctx).url, 'watchdog_refused_requests_total', { route: 'control', status: '401' })) ?? 0;
  const refusedBefore = await refused();
  const [update, stop] = await Promise.all([
    cli(ctx, withUrl(ctx, 'update', 'demo', '--token', 'wrong-sekrit')),
    cli(ctx, withUrl(ctx, 'stop', 'demo'), { WATCHDOG_TOKEN: 'wrong-sekrit' }),
  ]);
  const message = (action: string) =>
    `watchdog ${action}: 401: the token for instance demo was refused (check --token, WATCHDOG_TOKEN or ApiToken)\n`;
  assert.is(update.code, 1, update.stdout);
  assert.is(update.stderr, message('update'));
  assert.is(update.stdout, '');
  assert.is(stop.code, 1, stop.stdout);
  assert.is(stop.stderr, message('stop'));
  assert.is(stop.stdout, '');
  for (const r of [update, stop]) assert.not.ok((r.stdout + r.stderr).includes('sekrit'), 'token not printed');
  // The daemon saw both and refused both (the log has the first from this address in full and summarises the rest,
  // so the counter is what tells). A control is acted on, and logged (synchronous writes to a pipe), before it is
  // answered: the status asked for after both answers shows what a wrongly accepted one would have done.
  await waitFor('both refusals counted', async () => (await refused()) === refusedBefore + 2);
  const after = await d(ctx).status('demo', 'tok');
  assert.is(count(/control (update|stop) accepted/g), acceptedBefore, 'no update or stop accepted');
  assert.is(after.state, 'server.running');
  assert.is(after.pid, before.pid, 'the same server process, not stopped or restarted');
  assert.is(after.stopRequested, false);
  assert.is(after.updatePending, false);
});

test('end-to-end :: unknown instance and an instance without ApiToken: exit 1, saying which', async (ctx) => {
  const [unknown, tokenless] = await Promise.all([
    cli(ctx, withUrl(ctx, 'restart', 'nope', '--token', 'x')),
    cli(ctx, withUrl(ctx, 'status', 'gamma', '--token', 'x')),
  ]);
  assert.is(unknown.code, 1);
  // The daemon's 404, with the instances it has (read from GET /api/instances: a loopback client, no Admin configured).
  assert.is(unknown.stderr, 'watchdog restart: no instance "nope" (instances: demo, beta, gamma)\n');
  assert.is(tokenless.code, 1);
  assert.match(
    tokenless.stderr,
    /401: instance gamma has no ApiToken on the watchdog at .*set Servers\.Instances\.gamma\.ApiToken/,
  );
});

test('end-to-end :: usage errors: exit 2 with the usage text, nothing sent', async (ctx) => {
  const [noKey, unknownOption] = await Promise.all([
    cli(ctx, withUrl(ctx, 'stop')),
    cli(ctx, withUrl(ctx, 'status', 'demo', '--colour')),
  ]);
  assert.is(noKey.code, 2);
  assert.match(noKey.stderr, /missing the instance key\nusage: watchdog stop <key>/);
  assert.is(unknownOption.code, 2);
  assert.match(unknownOption.stderr, /unknown option --colour\n/);
  assert.is((await d(ctx).status('demo', 'tok')).stopRequested, false, 'the bare stop did not reach the daemon');
});

test('end-to-end :: daemon down: once it has stopped, exit 1 with "no watchdog answering"', async (ctx) => {
  const url = d(ctx).url;
  assert.is(await d(ctx).stop(), 0);
  const r = await cli(ctx, withUrl(ctx, 'status', 'demo'));
  assert.is(r.code, 1);
  assert.is(
    r.stderr,
    `watchdog status: no watchdog answering at ${url} — is it running? (start it with: watchdog start)\n`,
  );
});

test.run();
