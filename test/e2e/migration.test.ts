import { spawnSync } from 'node:child_process';
import { readdir, readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readCmdline } from '../../src/process/proc-info.ts';
import { basic, type RunningDaemon, type StatusJson, startDaemon } from '../_support/daemon.ts';
import { freePort, ROOT, tempDir, waitFor } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../_support/webhook.ts';
import { writeWatchdogDb } from '../fixtures/watchdog-db/build.ts';
import { cvarOf, type DownJenkins, environOf, installFixture, startDownJenkins } from './_support/real-install.ts';
import * as rs from './resilience/_support/daemon-crash.ts';

/**
 * The acceptance test of the drop-in migration: the folder of a real SS14.Watchdog installation
 * (test/fixtures/migration/: its appsettings.yml and appsettings.Development.yml as the .NET watchdog read them,
 * a data.db with its schema, each instance's build in bin/) where the old watchdog, run with
 * `PersistServers: true` and `DOTNET_ENVIRONMENT=Development`, was stopped and left `wizards`' server running.
 * This daemon is started in that folder with the same files and the same environment, and nothing else.
 */
const KEYS = ['wizards', 'lrp'] as const;
type Key = (typeof KEYS)[number];
const SERVER = fixture('log-starts.mjs');
/** Tokens as appsettings.yml writes them (`ApiToken: 123456` is a YAML number there). */
const FILE_TOKEN: Record<Key, string> = { wizards: '123456', lrp: 'lrp-token-from-appsettings' };
/** `Servers__Instances__lrp__ApiToken` in the daemon's environment. */
const ENV_TOKEN = 'lrp-token-from-the-environment';
/** The tokens that work once the daemon runs. */
const TOKEN: Record<Key, string> = { wizards: FILE_TOKEN.wizards, lrp: ENV_TOKEN };
/** The check-in secret the old watchdog gave wizards' server and persisted in data.db. */
const PERSISTED_SECRET = 'c2VjcmV0LW9mLXRoZS1vbGQtd2F0Y2hkb2c=';
const REVISION: Record<Key, string> = { wizards: '4821', lrp: 'lrp-2024.05.17' };
/** appsettings.Development.yml's TimeoutSeconds (the main file says 90 and 120). */
const DEV_TIMEOUT_S = 3;

interface Status extends StatusJson {
  name: string;
}

interface Ctx {
  dir: string;
  cleanup: () => Promise<void>;
  ports: { daemon: number; daemon2: number; wizards: number; lrp: number };
  yaml: string;
  hook: WebhookReceiver | null;
  jenkins: DownJenkins | null;
  /** The wizards server the old watchdog left running. */
  old: number;
  daemon: RunningDaemon | null;
  /** lrp's server, launched by the daemon. */
  lrp: number;
  servers: Set<number>;
}

const init = (): Ctx => ({
  dir: '',
  cleanup: async () => {},
  ports: { daemon: 0, daemon2: 0, wizards: 0, lrp: 0 },
  yaml: '',
  hook: null,
  jenkins: null,
  old: 0,
  daemon: null,
  lrp: 0,
  servers: new Set(),
});

const startLog = (ctx: Ctx) => join(ctx.dir, 'server-starts.log');
const starts = async (ctx: Ctx) =>
  (await readFile(startLog(ctx), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
const instanceDir = (ctx: Ctx, key: Key) => join(ctx.dir, 'instances', key);

/**
 * The environment the old watchdog ran with (`DOTNET_ENVIRONMENT=Development`), with the test runner's own
 * environment-name and address variables blanked so they cannot pick another layer. Every fixture server the
 * daemon starts inherits START_LOG (one line per start) and a lifetime bound.
 */
function watchdogEnv(ctx: Ctx, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DOTNET_ENVIRONMENT: 'Development',
    WATCHDOG_ENV: '',
    ASPNETCORE_ENVIRONMENT: '',
    ASPNETCORE_URLS: '',
    DOTNET_URLS: '',
    START_LOG: startLog(ctx),
    FIXTURE_LIFETIME_MS: '120000',
    ...extra,
  };
}

/** Starts wizards' server as the real watchdog launched it (its arguments, then the instance's), detached. */
async function startOldServer(ctx: Ctx): Promise<number> {
  const dir = instanceDir(ctx, 'wizards');
  return rs.startLeftServer({
    program: join(dir, 'bin', 'Robust.Server'),
    key: 'wizards',
    dir,
    baseUrl: `http://127.0.0.1:${ctx.ports.daemon}`,
    port: ctx.ports.wizards,
    env: {
      ROBUST_CVAR_watchdog__token: PERSISTED_SECRET,
      DOTNET_TieredPGO: '0',
      START_LOG: startLog(ctx),
      FIXTURE_LIFETIME_MS: '120000',
    },
    servers: ctx.servers,
  });
}

function runCheck(ctx: Ctx, env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/watchdog'), 'check'], {
    cwd: ctx.dir,
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...process.env, ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const status = async (d: RunningDaemon, key: Key) => (await rs.statusOf(d, key, TOKEN[key])) as Status;

async function statusCode(url: string, key: string, token: string): Promise<number> {
  const res = await fetch(`${url}/instances/${key}/status`, {
    headers: { authorization: basic(key, token) },
    signal: AbortSignal.timeout(5000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Asserts a server the daemon launched checks in at a loopback address the daemon answers, and got the file's environment. */
async function assertLaunchedByDaemon(ctx: Ctx, d: RunningDaemon, pid: number): Promise<void> {
  const cmdline = await readCmdline(pid);
  assert.ok(cmdline, `the command line of ${pid}`);
  const base = cvarOf(cmdline, 'watchdog.baseUrl');
  assert.ok(base !== null, `watchdog.baseUrl in ${cmdline.join(' ')}`);
  assert.match(
    base,
    new RegExp(`^http://127\\.0\\.0\\.1:(${ctx.ports.daemon}|${ctx.ports.daemon2})/?$`),
    'a loopback address the daemon listens on',
  );
  assert.not.match(base, 'example.invalid', 'not the unreachable BaseUrl');
  const health = (await (
    await fetch(new URL('health', base.endsWith('/') ? base : `${base}/`), { signal: AbortSignal.timeout(5000) })
  ).json()) as { pid: number };
  assert.is(health.pid, d.proc.pid, 'that address is this daemon');
  const env = await environOf(pid);
  assert.is(env.get('DOTNET_TieredPGO'), '0', 'EnvironmentVariables: a YAML number reaches the server as its text');
  assert.ok(env.get('ROBUST_CVAR_watchdog__token'), 'the check-in secret in the environment');
  assert.not.ok(
    cmdline.some((a) => a.includes(env.get('ROBUST_CVAR_watchdog__token') ?? '\0')),
    'and not in argv',
  );
}

const test = suite<Ctx>('e2e :: drop-in migration of a real SS14.Watchdog installation', init());

test.before(async (ctx) => {
  const tmp = await tempDir('wd-e2e-migration-');
  // The real path: the daemon resolves RunCommand from its working directory, which the kernel reports resolved.
  ctx.dir = await realpath(tmp.path);
  ctx.cleanup = tmp.cleanup;
  ctx.ports = { daemon: await freePort(), daemon2: await freePort(), wizards: await freePort(), lrp: await freePort() };
  ctx.hook = await startWebhookReceiver();
  ctx.jenkins = await startDownJenkins();
  ctx.yaml = await installFixture(
    ctx.dir,
    {
      WATCHDOG_PORT: String(ctx.ports.daemon),
      WATCHDOG_PORT_2: String(ctx.ports.daemon2),
      DISCORD_WEBHOOK: ctx.hook.url,
      JENKINS_URL: ctx.jenkins.url,
      WIZARDS_PORT: String(ctx.ports.wizards),
      LRP_PORT: String(ctx.ports.lrp),
    },
    SERVER,
    KEYS,
  );
  ctx.old = await startOldServer(ctx);
  await writeWatchdogDb(join(ctx.dir, 'data.db'), [
    { Key: 'wizards', Revision: REVISION.wizards, PersistedToken: PERSISTED_SECRET, PersistedPid: ctx.old },
    { Key: 'lrp', Revision: REVISION.lrp, PersistedToken: 'a-token-of-a-server-long-gone' },
  ]);
});

test.after(async (ctx) => {
  // PersistServers: true, so the daemon leaves its servers running; end every one of them by pid.
  await ctx.daemon?.stop();
  if (ctx.dir) for (const pid of await rs.pidsWith(join(ctx.dir, 'instances'))) ctx.servers.add(pid);
  for (const pid of ctx.servers) rs.killGroup(pid);
  await ctx.hook?.close();
  await ctx.jenkins?.close();
  await ctx.cleanup();
});

test("migration :: watchdog check accepts the installation's files as they are: exit 0, one warning line naming what is ignored, the Development layer applied", async (ctx) => {
  const before = await readdir(ctx.dir, { recursive: true });
  const r = runCheck(ctx, watchdogEnv(ctx));
  assert.is(r.status, 0, r.stderr);
  const all = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.startsWith('warning:'));
  // The test's Development layer shortens TimeoutSeconds for speed; for an engine server that earns a warning each.
  const short = all.filter((l) => /\.TimeoutSeconds: 3 is under 30: the engine checks in every 15 s/.test(l));
  assert.equal(short.length, 2, `the two engine servers with TimeoutSeconds 3:\n${r.stderr}`);
  const warnings = all.filter((l) => !short.includes(l));
  assert.is(warnings.length, 1, `exactly one other warning line:\n${r.stderr}`);
  const warning = warnings[0] ?? '';
  for (const ignored of [
    'Serilog.Using',
    'Serilog.WriteTo',
    'Serilog.Enrich',
    'Serilog.MinimumLevel.Override for SS14, Microsoft, Microsoft.Hosting.Lifetime',
  ]) {
    assert.ok(warning.includes(ignored), `the warning names ${ignored}: ${warning}`);
  }
  for (const used of ['AllowedHosts', 'DiscordWebhook', 'Jenkins', 'ApiToken', 'Default'])
    assert.not.ok(warning.includes(used), `${used} is not ignored: ${warning}`);

  assert.match(r.stdout, 'files:     appsettings.yml, appsettings.Development.yml\n');
  assert.match(r.stdout, `listen:    http://127.0.0.1:${ctx.ports.daemon}, http://127.0.0.1:${ctx.ports.daemon2}\n`);
  assert.match(
    r.stdout,
    "webhook:   set (Notification.ChatWebhook, or the real watchdog's DiscordWebhook)\n",
    'DiscordWebhook is the chat webhook',
  );
  const wizards = r.stdout.slice(r.stdout.indexOf('  wizards'), r.stdout.indexOf('  lrp'));
  const lrp = r.stdout.slice(r.stdout.indexOf('  lrp'));
  assert.match(wizards, '  wizards ("Wizard\'s Den [dev]")\n');
  assert.match(wizards, "update type: CiServer (the real watchdog's Jenkins)\n", 'Jenkins is CiServer');
  assert.match(wizards, `api port:    ${ctx.ports.wizards}\n`, 'apiport, lower case');
  assert.match(
    wizards,
    `timeout:     ${DEV_TIMEOUT_S} s\n`,
    "the Development TimeoutSeconds over the main file's timeoutseconds",
  );
  assert.match(wizards, 'api token:   set\n');
  assert.match(
    lrp,
    `timeout:     ${DEV_TIMEOUT_S} s\n`,
    "Development's lower-case timeoutseconds over the main file's TimeoutSeconds",
  );
  assert.match(lrp, 'update type: none\n');

  // Without DOTNET_ENVIRONMENT the Development file is not read: the main file's values.
  const prod = runCheck(ctx, watchdogEnv(ctx, { DOTNET_ENVIRONMENT: '' }));
  assert.is(prod.status, 0, prod.stderr);
  assert.match(prod.stdout, 'files:     appsettings.yml\n');
  assert.match(prod.stdout, '  wizards ("Wizard\'s Den")\n');
  assert.match(prod.stdout, 'timeout:     90 s\n');
  assert.match(prod.stdout, 'timeout:     120 s\n');

  assert.equal((await readdir(ctx.dir, { recursive: true })).sort(), before.sort(), 'check wrote nothing');
});

test('migration :: the daemon in the same folder imports data.db: the server left running is adopted (same pid, no second launch), lrp launches, revisions from data.db', async (ctx) => {
  const d = await startDaemon(ctx.yaml, {
    dir: ctx.dir,
    env: watchdogEnv(ctx, { Servers__Instances__lrp__ApiToken: ENV_TOKEN }),
  });
  ctx.daemon = d;
  const wizards = (await rs.waitStatus(d, 'wizards', TOKEN.wizards, 'server.running', rs.running)) as Status;
  const lrp = (await rs.waitStatus(d, 'lrp', TOKEN.lrp, 'server.running', rs.running)) as Status;
  ctx.lrp = lrp.pid ?? 0;
  ctx.servers.add(ctx.lrp);

  assert.is(wizards.pid, ctx.old, "the old watchdog's server is adopted");
  assert.is(wizards.restarts, 0);
  assert.is(wizards.revision, REVISION.wizards, "wizards' revision from data.db");
  assert.is(lrp.revision, REVISION.lrp, "lrp's revision from data.db");
  assert.is(wizards.name, "Wizard's Den [dev]", 'the Development Name is in effect');
  assert.is(lrp.name, "Wizard's Den LRP");
  assert.match(
    d.log(),
    `[watchdog:wizards] imported from the real watchdog's data file: revision ${REVISION.wizards}; its server (pid ${ctx.old}) is running and is adopted`,
  );
  assert.match(
    d.log(),
    `[watchdog:lrp] imported from the real watchdog's data file: revision ${REVISION.lrp}; no server pid was persisted`,
  );
  assert.is(rs.logLines(d, /\[watchdog:wizards\] server launched/).length, 0, 'no second wizards server');
  assert.is(rs.logLines(d, /\[watchdog:lrp\] server launched/).length, 1);
  assert.equal(await starts(ctx), [ctx.old, ctx.lrp], "one start each: the old server (by the test) and lrp's");
  assert.equal(
    (await rs.pidsWith(join(instanceDir(ctx, 'wizards'), 'config.toml'))).sort(),
    [ctx.old],
    'exactly one wizards server runs',
  );
  assert.is(
    rs.logLines(d, /accepted but not used by this watchdog: Serilog\.Using/).length,
    1,
    'the same one warning at start',
  );
});

test('migration :: servers check in at a loopback address of the daemon, not the unreachable BaseUrl, and stay running past three TimeoutSeconds', async (ctx) => {
  const d = ctx.daemon!;
  await assertLaunchedByDaemon(ctx, d, ctx.lrp);
  assert.is(
    cvarOf((await readCmdline(ctx.old)) ?? [], 'watchdog.baseUrl'),
    `http://127.0.0.1:${ctx.ports.daemon}`,
    'the adopted one where the old watchdog listened',
  );
  await waitFor(
    'the BaseUrl advice',
    () => d.log().includes('BaseUrl https://watchdog.example.invalid/ does not reach this watchdog'),
    8000,
    100,
  );

  // Each server's check-ins keep being accepted for two TimeoutSeconds (the daemon's clock, in its status): one
  // accepted that long after the first seen here, with the same server, means no hang deadline passed in between.
  for (const [key, pid] of [
    ['wizards', ctx.old],
    ['lrp', ctx.lrp],
  ] as const) {
    const first = await rs.waitStatus(d, key, TOKEN[key], 'a check-in', (st) => st.lastCheckinAt !== null);
    const past = Date.parse(first.lastCheckinAt!) + 2 * DEV_TIMEOUT_S * 1000;
    const s = await rs.waitStatus(
      d,
      key,
      TOKEN[key],
      'a check-in two TimeoutSeconds later, or another server',
      (st) => st.pid !== pid || st.restarts > 0 || Date.parse(st.lastCheckinAt ?? '') > past,
      2 * DEV_TIMEOUT_S * 1000 + 20_000,
    );
    assert.equal(
      [s.state, s.pid, s.restarts, s.startupFailures],
      ['server.running', pid, 0, 0],
      `${key}: same server, never restarted`,
    );
  }
  assert.is(
    rs.logLines(d, /\] Server `\w+` timed out|\] server launched/).length,
    1,
    'nothing timed out or relaunched; lrp launched once',
  );
  // So far: the hang test below finds its notice the first the chat got (the webhook posts in order).
  assert.is(ctx.hook!.messages.length, 0, 'nothing to tell the chat');
});

test('migration :: both Urls answer /health for the same daemon; Servers__Instances__lrp__ApiToken wins over the file; the numeric ApiToken works', async (ctx) => {
  const d = ctx.daemon!;
  const pids: number[] = [];
  for (const port of [ctx.ports.daemon, ctx.ports.daemon2]) {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(5000) });
    assert.is(res.status, 200, `port ${port}`);
    pids.push(((await res.json()) as { pid: number }).pid);
  }
  assert.equal(pids, [d.proc.pid, d.proc.pid]);
  const second = `http://127.0.0.1:${ctx.ports.daemon2}`;
  assert.is(await statusCode(second, 'lrp', ENV_TOKEN), 200, "the environment's token");
  assert.is(await statusCode(second, 'lrp', FILE_TOKEN.lrp), 401, "the file's token no longer");
  assert.is(await statusCode(d.url, 'wizards', '123456'), 200, 'ApiToken: 123456');
  assert.is(await statusCode(d.url, 'wizards', '123457'), 401);
});

test('migration :: the Jenkins instance asks the CI server of its Updates; one that is down changes nothing', async (ctx) => {
  const d = ctx.daemon!;
  const jenkins = ctx.jenkins!;
  assert.equal(jenkins.paths, [], 'an adopted server is not updated at start');
  const pending = (await status(d, 'wizards')).updatePending;
  const res = await fetch(`${d.url}/instances/wizards/update`, {
    method: 'POST',
    headers: { authorization: basic('wizards', TOKEN.wizards) },
    signal: AbortSignal.timeout(5000),
  });
  await res.arrayBuffer();
  assert.is(res.status, 200);
  await waitFor(
    'the CI job to be asked',
    () => jenkins.paths.includes('/jenkins/job/SS14%20Content/api/json'),
    5000,
    50,
  );
  await waitFor(
    'the failed check to be logged',
    () => rs.logLines(d, /\[watchdog:wizards\] update check failed .*answered HTTP 503/).length > 0,
    5000,
    50,
  );
  const s = await status(d, 'wizards');
  assert.equal(
    [s.state, s.pid, s.revision, s.updatePending, s.restarts],
    ['server.running', ctx.old, REVISION.wizards, pending, 0],
    'as before the check',
  );
});

test('migration :: a hang is caught after the Development TimeoutSeconds: the DiscordWebhook is told and wizards relaunches on its imported build', async (ctx) => {
  const d = ctx.daemon!;
  const hook = ctx.hook!;
  const asked = ctx.jenkins!.paths.length;
  const from = d.log().length;
  process.kill(ctx.old, 'SIGSTOP');
  // The last check-in the daemon had counted when the server froze (one in flight can only be later).
  const frozenAt = Date.parse((await status(d, 'wizards')).lastCheckinAt ?? '');
  // 3 s in the Development layer; the main file's 90 s would never fire here.
  const msg = await waitFor(
    'the hang notification',
    () => hook.messages.find((m) => m.content.includes('`wizards`')),
    15_000,
    50,
  );
  assert.is(msg.content, 'Server `wizards` timed out and will be killed. Check server logs for possible causes.');
  assert.is(hook.messages[0], msg, 'the first message the chat got');
  // Not before the deadline, by the daemon's own clock: its hang line is stamped TimeoutSeconds or more after that
  // check-in (10 ms for clock rounding).
  const hangLine = d
    .log()
    .slice(from)
    .split('\n')
    .filter((l) => l.includes('[watchdog:wizards] Server `wizards` timed out'));
  assert.is(hangLine.length, 1, hangLine.join('\n'));
  const declaredAt = Date.parse(hangLine[0]!.slice(0, hangLine[0]!.indexOf(' ')));
  assert.ok(
    declaredAt - frozenAt >= DEV_TIMEOUT_S * 1000 - 10,
    `hang declared ${declaredAt - frozenAt} ms after the last check-in (TimeoutSeconds ${DEV_TIMEOUT_S} s)`,
  );
  assert.match(String(msg.headers['content-type']), 'application/json');

  const s = await rs.waitStatus(
    d,
    'wizards',
    TOKEN.wizards,
    'relaunched',
    (st) => rs.running(st) && st.pid !== ctx.old,
    15_000,
  );
  const pid = s.pid!;
  ctx.servers.add(pid);
  assert.not.ok(rs.isAlive(ctx.old), 'the hung server was killed');
  assert.is(s.revision, REVISION.wizards, 'the imported revision stays');
  assert.ok(
    ctx.jenkins!.paths.length > asked,
    'the first launch under this daemon checked Jenkins, which was down, and went on',
  );
  assert.is((s as Status).name, "Wizard's Den [dev]");
  assert.equal(await starts(ctx), [ctx.old, ctx.lrp, pid], 'one new start, by the daemon');
  assert.is(rs.logLines(d, /\[watchdog:wizards\] server launched/).length, 1);
  await assertLaunchedByDaemon(ctx, d, pid);
  assert.is(hook.messages.length, 1, 'one notification');
  assert.is((await status(d, 'lrp')).pid, ctx.lrp, 'lrp untouched');
});

test.run();
