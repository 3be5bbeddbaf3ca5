import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { statFields, verifyProcess } from '../../../src/process/proc-info.ts';
import { detectTracking } from '../../../src/process/tracking.ts';
import { testConfig } from '../../_support/config.ts';
import { type DaemonCtx, daemonSuite, type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { skippedSuite } from '../../_support/skip.ts';
import { parseExposition, sample } from '../../http/_support/metrics.ts';
import { crash, fixedUrls, isAlive, killGroup, running, waitStatus } from '../resilience/_support/daemon-crash.ts';

/**
 * escaper.mjs starts a helper in a session of its own that ignores SIGTERM and holds the game port. Before process
 * tracking, the group kill missed it and every relaunch failed EADDRINUSE until the instance gave up. Run in both
 * tracking modes: cgroup v2 where this machine allows it (skipped, visibly, where not) and the environment marker.
 */

const KEY = 'esc';
const TOKEN = 'tok';

interface Escaper {
  port: number;
  yaml: string;
  /** Every server and helper pid seen: killed after the suite. */
  pids: Set<number>;
  /** The cgroup folder the daemon named in its log (cgroup mode); tempDir's cleanup removes it. */
  base: string | null;
}
type Ctx = DaemonCtx & Escaper;

type Mode = 'cgroup' | 'marker';

/** Whether this machine lets a daemon run its launches in cgroups (the same probe the daemon makes). */
async function cgroupsHere(): Promise<string | null> {
  const scratch = await tempDir('wd-cgprobe-');
  try {
    const t = await detectTracking({ workDir: scratch.path, forceMarker: false, killMs: () => 1000 });
    await t.close();
    return t.mode === 'cgroup' ? null : t.description;
  } finally {
    await scratch.cleanup();
  }
}

const noCgroups = await cgroupsHere();

/** A daemon in the suite's folder in place of the last, which has exited (the suite stops the newest). */
async function start(ctx: Ctx): Promise<RunningDaemon> {
  ctx.daemon = await startDaemon(ctx.yaml, { dir: ctx.dir });
  return ctx.daemon;
}

/** The helper the current server started, once it runs (its pid is written by the fixture). */
async function helperOf(ctx: Ctx, server: number): Promise<number> {
  const file = join(ctx.dir, 'helper.pid');
  const helper = await waitFor(
    'the helper to start',
    async () => {
      const pid = Number(await readFile(file, 'utf8'));
      return pid > 0 && isAlive(pid) && pid !== server ? pid : undefined;
    },
    10_000,
  );
  ctx.pids.add(helper);
  return helper;
}

async function serverRunning(ctx: Ctx, what: string, notPid: number | null = null): Promise<number> {
  const s = await waitStatus(ctx.daemon!, KEY, TOKEN, what, (st) => running(st) && st.pid !== notPid, 20_000);
  ctx.pids.add(s.pid!);
  return s.pid!;
}

/** `watchdog_stragglers_killed_total` of the instance, by `when`, from the daemon's /metrics. */
async function stragglerCounts(d: RunningDaemon): Promise<Record<'exit' | 'relaunch', number | undefined>> {
  const res = await fetch(`${d.url}/metrics`);
  assert.is(res.status, 200);
  const families = parseExposition(await res.text());
  const count = (when: string) => sample(families, 'watchdog_stragglers_killed_total', { instance: KEY, when });
  return { exit: count('exit'), relaunch: count('relaunch') };
}

/** The suite for one tracking mode: skipped, saying why, where this machine cannot run it. */
function modeSuite(mode: Mode) {
  const name = `e2e :: faults: a helper that escapes the process group (${mode} tracking)`;
  if (mode === 'cgroup' && noCgroups !== null) {
    console.log(`escaping-helper: cgroup mode skipped: ${noCgroups}`);
    return skippedSuite<Ctx>(name);
  }
  return daemonSuite<Escaper>(name, {
    prefix: 'wd-escaper-',
    ctx: { port: 0, yaml: '', pids: new Set(), base: null },
    config: async (ctx) => {
      ctx.port = await freePort();
      const env = { HELPER_FILE: join(ctx.dir, 'helper.pid'), FIXTURE_LIFETIME_MS: '60000' };
      ctx.yaml = testConfig({
        instances: [
          {
            key: KEY,
            port: ctx.port,
            runCommand: fixture('escaper.mjs'),
            extra: `      EnvironmentVariables: ${JSON.stringify(env)}`,
          },
        ],
        extra: '  StragglerKillSeconds: 2\n  ResourceSampleSeconds: 0.3',
      }).replace(
        /^ {2}PersistServers: false$/m,
        `  PersistServers: false\n  Tracking: ${mode === 'marker' ? 'Environment' : 'Auto'}`,
      );
      return ctx.yaml;
    },
    after: (ctx) => {
      for (const pid of ctx.pids) killGroup(pid);
    },
  });
}

for (const mode of ['cgroup', 'marker'] as const) {
  const it = modeSuite(mode);

  it('escaping-helper :: the daemon says which tracking it uses', async (ctx) => {
    // Said right after `listening on`, which is all startDaemon waits for.
    const line = await waitFor('the tracking line', () => /process tracking: (.*)/.exec(ctx.daemon!.log())?.[1], 5000);
    if (mode === 'cgroup') {
      const base = /^cgroup v2 \((\/.+)\)$/.exec(line ?? '')?.[1];
      assert.ok(base, `cgroup mode in the log: ${line}`);
      ctx.base = base;
    } else assert.is(line?.trim(), 'environment marker (Process.Tracking is Environment)');
  });

  it('escaping-helper :: a crash: the helper dies with its server, and the relaunch runs', async (ctx) => {
    const server = await serverRunning(ctx, 'server.running');
    const helper = await helperOf(ctx, server);
    // It really left: a session and process group of its own.
    const [, , group, session] = statFields(await readFile(`/proc/${helper}/stat`, 'utf8'));
    assert.is.not(Number(group), server, 'the helper is not in the server group');
    assert.is(Number(session), helper, 'the helper leads a session of its own');
    const data = JSON.parse(await readFile(join(ctx.dir, 'instances', KEY, 'data.json'), 'utf8'));
    if (mode === 'cgroup') {
      const cgroup = (await readFile(`/proc/${helper}/cgroup`, 'utf8')).split('\n').find((l) => l.startsWith('0::'));
      assert.ok(data.launch.cgroup?.startsWith(ctx.base!), `the launch record names its cgroup: ${data.launch.cgroup}`);
      assert.ok(data.launch.cgroup.endsWith(cgroup!.slice(3)), `the helper is in the launch's cgroup (${cgroup})`);
    } else assert.is(data.launch.cgroup, null);
    // The helper's memory and CPU are the server's, in its own session or not (status `resources`).
    await waitFor('the helper counted in the resources', async () => {
      const s = (await ctx.daemon!.status(KEY, TOKEN)) as unknown as { pid: number; resources: { processes: number } };
      return s.pid === server && (s.resources?.processes ?? 0) >= 2 ? true : undefined;
    });
    // Launched through the cgroup wrapper or not, the record still verifies the server (PersistServers adoption).
    assert.ok(
      await verifyProcess(server, {
        startTime: data.launch.startTime,
        args: [data.launch.program, ...data.launch.args],
      }),
      'the launch record matches the running server',
    );

    process.kill(server, 'SIGKILL');
    const next = await serverRunning(ctx, 'relaunched', server);
    assert.is.not(next, server);
    assert.not.ok(isAlive(helper), 'the old helper is gone');
    const s = await ctx.daemon!.status(KEY, TOKEN);
    assert.is(s.startupFailures, 0, 'no failed start');
    assert.match(ctx.daemon!.log(), /killed 1 process\(es\) the server left behind when it exited/);
    assert.not.match(ctx.daemon!.log(), /EADDRINUSE/);
    assert.equal(await stragglerCounts(ctx.daemon!), { exit: 1, relaunch: 0 });
  });

  it('escaping-helper :: a killed daemon: the next one kills the helper as it starts, then launches', async (ctx) => {
    const server = await serverRunning(ctx, 'server.running');
    const helper = await helperOf(ctx, server);
    const name = (await readFile(`/proc/${helper}/comm`, 'utf8')).trim();
    await crash(ctx.daemon!);
    // The old server goes too (as a leftover without PersistServers it is shut down); the helper stays.
    process.kill(server, 'SIGKILL');
    await waitFor('the old server gone', () => !isAlive(server), 5000);
    assert.ok(isAlive(helper), 'the helper outlived its daemon and server');
    const d = await start(ctx);
    const next = await serverRunning(ctx, 'launched by the next daemon', server);
    assert.is.not(next, server);
    // Found by its tracking (marker or cgroup) at start, before the launch looks at the port.
    assert.match(
      d.log(),
      new RegExp(`killed 1 process\\(es\\) left by the previous daemon's launches.*pids=${helper}\\b`),
    );
    assert.not.match(d.log(), `held by pid ${helper} (${name})`);
    assert.not.ok(isAlive(helper), 'the helper was killed');
    assert.is((await d.status(KEY, TOKEN)).startupFailures, 0);
    assert.equal(await stragglerCounts(d), { exit: 0, relaunch: 1 });
  });

  it('escaping-helper :: PersistServers: an adopted server takes its helper with it, by its recorded launch', async (ctx) => {
    await ctx.daemon!.stop();
    ctx.yaml = fixedUrls(ctx.yaml.replace(/^ {2}PersistServers: false$/m, '  PersistServers: true'), await freePort());
    let d = await start(ctx);
    const server = await serverRunning(ctx, 'server.running');
    const helper = await helperOf(ctx, server);
    assert.is(await d.stop(), 0);
    assert.ok(isAlive(server) && isAlive(helper), 'both left running for the next daemon');
    const { launch } = JSON.parse(await readFile(join(ctx.dir, 'instances', KEY, 'data.json'), 'utf8'));
    assert.is(typeof launch.marker, 'string');
    d = await start(ctx);
    await waitFor('the adoption', () => /adopted the server left running/.test(d.log()), 10_000);
    process.kill(server, 'SIGKILL');
    const next = await serverRunning(ctx, 'relaunched after the adopted server died', server);
    assert.is.not(await helperOf(ctx, next), helper, 'the new helper (kept for cleanup)');
    assert.not.ok(isAlive(helper), "the adopted server's helper is gone");
    assert.match(d.log(), /killed 1 process\(es\) the server left behind when it exited/);
    if (launch.cgroup) assert.not.ok(existsSync(launch.cgroup), 'its recorded cgroup is removed');
    assert.is(mode === 'cgroup', Boolean(launch.cgroup));
  });

  it.run();
}
