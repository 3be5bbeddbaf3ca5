/**
 * The watchdog as the wrapper: the real daemon in Agones mode with fixture engine servers (which know nothing of
 * Agones) and the strict loopback fake of the SDK server (test/_support/agones-sdk.ts).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { type FakeAgonesSdk, startAgonesSdk } from '../_support/agones-sdk.ts';
import { runCli } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { type RunningDaemon, type StatusJson, waitState, withDaemons } from '../_support/daemon.ts';
import { freePort, tempSuite, waitFor } from '../_support/env.ts';
import { fixture, writeServerScript } from '../_support/fixtures.ts';

const HEALTH_S = 0.2;
/** How late a ping already on the wire may land on a loaded 2-core machine. */
const SLACK_MS = 700;
const TOKEN = 'tok';

type AgonesStatusJson = StatusJson & { agones?: { gameServer: string | null; state: string | null; ready: boolean } };

const agonesKeys = (port: number | null, extra = '') =>
  [
    'Agones:',
    ...(port === null ? [] : ['  Enabled: true', `  Port: ${port}`]),
    `  HealthSeconds: ${HEALTH_S}`,
    '  PlayersSeconds: 0.2',
    extra,
  ]
    .filter(Boolean)
    .join('\n');

/** The fields of the status JSON a crash loop shows in. */
type LoopStatusJson = StatusJson & { crashStreak?: number; lastExit: { at: string } | null };

const posts = (sdk: FakeAgonesSdk, path: string) => sdk.callsTo('POST', path);

const test = tempSuite<{ sdk?: FakeAgonesSdk }>('agones: the watchdog as the wrapper', {
  prefix: 'wd-agones-',
  after: async (ctx) => {
    await ctx.sdk?.close();
    ctx.sdk = undefined;
  },
});

/**
 * A fake SDK server (closed after the test) and a config running `fixtureName` as the one instance on `port`, with
 * Agones enabled in the file when `enabled`, else left for AGONES_SDK_HTTP_PORT to turn on.
 */
async function wrapping(ctx: { dir: string; sdk?: FakeAgonesSdk }, fixtureName: string, enabled: boolean) {
  const sdk = await startAgonesSdk();
  ctx.sdk = sdk;
  const port = await freePort();
  const script = await writeServerScript(join(ctx.dir, 'server.sh'), fixture(fixtureName));
  const yaml = testConfig({ instances: [{ port, runCommand: script }], extra: agonesKeys(enabled ? sdk.port : null) });
  return { sdk, yaml, port };
}

test('wrapper :: /ready at the first check-in, /health through a crash and relaunch, players, status; stop ends in /shutdown', async (ctx) => {
  const { sdk, yaml } = await wrapping(ctx, 'checkin-late.mjs', true);
  await withDaemons({ prefix: 'wd-agones-d-' }, async (s) => {
    // Long enough that two health pings come before it even on a starved machine.
    const d = await s.start(yaml, { CHECKIN_DELAY_MS: '5000' });
    // Launched, not checked in yet: health pings already, no Ready.
    await waitFor('a launched server', async () => (await d.status('demo', TOKEN)).pid !== null);
    await waitFor('health pings', () => posts(sdk, '/health').length >= 2, 10_000);
    assert.is((await d.status('demo', TOKEN)).state, 'server.starting');
    assert.is(posts(sdk, '/ready').length, 0, 'no /ready before the first check-in');

    const first = await waitState(d, 'demo', TOKEN, 'server.running');
    await waitFor('/ready', () => posts(sdk, '/ready').length === 1, 10_000);
    // The first check-in is the move to running, stamped in the daemon's log (the status's lastCheckinAt may be a
    // later one by the time it is read).
    const line = /^(\S+) INFO +\[watchdog:demo\] state server\.running from=server\.starting/m.exec(d.log());
    const checkedIn = Date.parse(line?.[1] ?? '');
    assert.ok(Number.isFinite(checkedIn), 'the move to running is in the log');
    assert.ok((posts(sdk, '/ready')[0]?.at ?? 0) >= checkedIn - 50, '/ready came after the check-in');

    // The player count from the server's GET /status (the fixture says 0) as the label and the Counter.
    await waitFor('the players label', () => sdk.gameServer().object_meta.labels['agones.dev/sdk-players'] === '0');
    await waitFor('the players Counter', () => sdk.callsTo('PATCH', '/v1beta1/counters/players').length > 0);
    const status = await waitFor('the GameServer in the status', async () => {
      const st = (await d.status('demo', TOKEN)) as AgonesStatusJson;
      return st.agones?.state === 'Ready' ? st : undefined;
    });
    assert.equal(status.agones, { gameServer: 'fake-gs', state: 'Ready', ready: true });
    // The dashboard (open to loopback while no Admin is configured) shows it on the card, the row unhidden.
    const page = await (await fetch(`${d.url}/`)).text();
    assert.match(page, '<div data-row="agones"><dt>agones</dt><dd data-field="agones">fake-gs: Ready</dd></div>');

    // A crash: relaunched at once, 1.5 s to check in again; the pings go on all along: several come while no
    // server has checked in (between the kill and the relaunched server's check-in).
    const killedAt = Date.now();
    process.kill(first.pid ?? 0, 'SIGKILL');
    const second = await waitState(d, 'demo', TOKEN, 'server.running', { notPid: first.pid });
    const secondCheckin = Date.parse(second.lastCheckinAt ?? '');
    const between = posts(sdk, '/health').filter((c) => c.at > killedAt && c.at < secondCheckin);
    assert.ok(between.length >= 2, `${between.length} health pings through the relaunch`);
    assert.is(posts(sdk, '/ready').length, 1, 'Ready once: again would free an Allocated GameServer');
    assert.ok(second.restarts >= 1);

    // stop: the server leaves (POST /update), then the GameServer is shut down and the pings end.
    assert.is(await d.control('demo', TOKEN, 'stop'), 200);
    await waitState(d, 'demo', TOKEN, 'stopped.idle');
    const shutdown = await waitFor('/shutdown', () => posts(sdk, '/shutdown')[0], 10_000);
    assert.is(shutdown.status, 200);
    assert.is(sdk.gameServer().status.state, 'Shutdown');
    // The later marker: the daemon's exit. Over all the rest of its life, no ping started after /shutdown.
    assert.is(await d.stop(), 0);
    assert.is(posts(sdk, '/health').filter((c) => c.at > shutdown.at + 50).length, 0, 'no /health after /shutdown');
  });
});

test('wrapper :: a server that keeps failing at start: /shutdown once the watchdog gives up, then no more /health', async (ctx) => {
  const { sdk, yaml } = await wrapping(ctx, 'exit-at-once.sh', true);
  await withDaemons({ prefix: 'wd-agones-d-' }, async (s) => {
    const d = await s.start(yaml);
    const failing = await waitState(d, 'demo', TOKEN, 'stopped.failing');
    assert.is(failing.startupFailures, 3);
    const shutdown = await waitFor('/shutdown', () => posts(sdk, '/shutdown')[0], 10_000);
    assert.ok(posts(sdk, '/health').length > 0, 'pinged while it was still trying');
    // The later marker: the daemon's exit. Over all the rest of its life, no ping started after /shutdown.
    assert.is(await d.stop(), 0);
    assert.is(posts(sdk, '/health').filter((c) => c.at > shutdown.at + 50).length, 0, 'no /health after giving up');
    assert.is(posts(sdk, '/ready').length, 0, 'never Ready: it never checked in');
    assert.is(posts(sdk, '/shutdown').length, 1);
  });
});

const STABLE_S = 1.8;

test('wrapper :: a crash loop after check-ins: /health goes on through one crash, stops at Agones.CrashLoopLimit, resumes after a stable run', async (ctx) => {
  const sdk = await startAgonesSdk();
  ctx.sdk = sdk;
  const port = await freePort();
  // Each run checks in at once. The first exits 99 (a crash) 0.3 s after its start, the second 1 s after its own,
  // both within StableRunSeconds (so they make one loop); the third stays up.
  const starts = join(ctx.dir, 'starts.log');
  const script = join(ctx.dir, 'server.sh');
  await writeFile(
    script,
    [
      '#!/bin/sh',
      `n=$(cat "${starts}" 2>/dev/null | wc -l)`,
      'if [ "$n" -eq 0 ]; then FIXTURE_LIFETIME_MS=300; export FIXTURE_LIFETIME_MS; fi',
      'if [ "$n" -eq 1 ]; then FIXTURE_LIFETIME_MS=1000; export FIXTURE_LIFETIME_MS; fi',
      `exec "${process.execPath}" "${fixture('log-starts.mjs')}" "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const yaml = testConfig({
    instances: [{ port, runCommand: script }],
    extra: agonesKeys(sdk.port, '  CrashLoopLimit: 2'),
  }).replace('StableRunSeconds: 30', `StableRunSeconds: ${STABLE_S}`);
  await withDaemons({ prefix: 'wd-agones-d-' }, async (s) => {
    const d = await s.start(yaml, { START_LOG: starts });
    const status = async () => (await d.status('demo', TOKEN)) as LoopStatusJson;
    const streakAt = (n: number) =>
      waitFor(
        `crash ${n} in the loop`,
        async () => {
          const st = await status();
          return (st.crashStreak ?? 0) >= n ? st : undefined;
        },
        30_000,
      );
    const first = await streakAt(1);
    assert.is(first.crashStreak, 1, 'the first crash of the loop was seen on its own');
    assert.is(posts(sdk, '/ready').length, 1, 'it checked in, so this is a crash loop, not startup failures');
    const second = await streakAt(2);
    const firstAt = Date.parse(first.lastExit?.at ?? '');
    const secondAt = Date.parse(second.lastExit?.at ?? '');
    // Through the first crash, its relaunch and the second run (a second long), the pings went on.
    const between = posts(sdk, '/health').filter((c) => c.at > firstAt && c.at < secondAt);
    assert.ok(between.length >= 2, `${between.length} health pings between the two crashes`);
    // At the second crash in a row they stop, though the daemon relaunches it; no /shutdown: Agones acts. The third
    // run checks in after the second crash, and is stable StableRunSeconds later at the earliest: the loop's end
    // (crashStreak back to 0) is the later marker, and the quiet stretch ends before it. From a ping period after the
    // second crash (one already on the wire may land).
    const quietFrom = secondAt + HEALTH_S * 1000 + SLACK_MS;
    const quietTo = secondAt + STABLE_S * 1000;
    await waitFor('the loop over', async () => (await status()).crashStreak === 0, 20_000);
    const resumed = Date.now();
    assert.ok(resumed > quietTo, 'the loop ended after StableRunSeconds');
    const quiet = posts(sdk, '/health').filter((c) => c.at > quietFrom && c.at < quietTo);
    assert.is(quiet.length, 0, 'no /health while the loop was at its limit');
    assert.is(posts(sdk, '/shutdown').length, 0, 'no /shutdown: the GameServer is let go Unhealthy');
    assert.match(d.log(), /crashed 2 times in a row after checking in; no more Agones health pings/);
    // The third run stays up: after StableRunSeconds the loop is over and the pings come back.
    await waitFor('/health again', () => posts(sdk, '/health').some((c) => c.at >= resumed), 10_000);
    assert.match(d.log(), /the crash loop is over \(a stable run\); Agones health pings resume/);
  });
});

test('wrapper :: AGONES_SDK_HTTP_PORT turns it on; SIGTERM shuts the server down gracefully, and calls no /shutdown', async (ctx) => {
  const { sdk, yaml, port } = await wrapping(ctx, 'log-starts.mjs', false);
  await withDaemons({ prefix: 'wd-agones-d-' }, async (s) => {
    const d: RunningDaemon = await s.start(yaml, sdk.env);
    await waitState(d, 'demo', TOKEN, 'server.running');
    await waitFor('/ready', () => posts(sdk, '/ready').length === 1, 10_000);
    // A reload to a second instance is refused as a start would be; the running one goes on.
    const second = yaml.replace(
      'Servers:\n  Instances:\n',
      `Servers:\n  Instances:\n    other:\n      ApiPort: ${port + 1}\n`,
    );
    await writeFile(join(d.dir, 'appsettings.yml'), second);
    d.proc.kill('SIGHUP');
    await waitFor('the reload refused', () =>
      /Servers\.Instances: expected exactly one instance in Agones mode/.test(d.log()),
    );
    assert.match(d.log(), /reload \(\S+\) refused/);
    assert.is((await d.status('demo', TOKEN)).state, 'server.running');
    assert.is(await d.stop(), 0);
    assert.match(d.log(), /Watchdog stopping, shutting down\.\.\./, 'the server was asked to shut down gracefully');
    // The pod is being deleted when its daemon gets SIGTERM: Agones is already ending the GameServer.
    assert.is(posts(sdk, '/shutdown').length, 0, 'no /shutdown on SIGTERM');
    assert.ok(posts(sdk, '/health').length > 0);
  });
});

test('wrapper :: Agones mode with two instances: exit 2, the problem named with its key path', async (ctx) => {
  const yaml = testConfig({
    instances: [
      { key: 'a', port: 1 },
      { key: 'b', port: 2 },
    ],
    extra: 'Agones:\n  Enabled: true',
  });
  await writeFile(join(ctx.dir, 'appsettings.yml'), yaml);
  for (const env of [{}, { AGONES_SDK_HTTP_PORT: '9358' }] as Array<Record<string, string>>) {
    if ('AGONES_SDK_HTTP_PORT' in env)
      await writeFile(join(ctx.dir, 'appsettings.yml'), yaml.replace('Agones:\n  Enabled: true\n', ''));
    const { code, out } = await runDaemon(ctx.dir, env);
    assert.is(code, 2, out);
    assert.match(out, /appsettings\.yml: Servers\.Instances: expected exactly one instance in Agones mode/);
    assert.match(out, 'AGONES_SDK_HTTP_PORT' in env ? /AGONES_SDK_HTTP_PORT is set/ : /Agones\.Enabled is true/);
  }
});

/** `watchdog start` in `cwd`, to completion (it is expected to refuse): its exit code and all it wrote. */
async function runDaemon(cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const r = await runCli(['start'], { cwd, env, timeoutMs: 15_000 });
  return { code: r.code, out: r.stdout + r.stderr };
}

test.run();
