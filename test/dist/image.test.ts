/**
 * The container image, in seconds: the final stage's process is run as a plain process, the
 * Dockerfile's ENTRYPOINT + CMD, its ENV and WORKDIR, read from the Dockerfile itself so this test cannot drift
 * from it. The image itself is built and run by test/image/image.e2e.ts (`npm run test:image`, minutes, with
 * buildah), outside `npm test`. Here the image's /app (production dependencies, dist/, bin/, package.json, no
 * src/) is stood in for by the packed package installed into a temp project, which is the same set of files;
 * /config and /data are temp folders. Also checked: the Dockerfile's shape (stages, non-root user, production-only dependencies,
 * the HEALTHCHECK), the HEALTHCHECK command against the running daemon, the .NET-style environment overrides,
 * and that SIGTERM stops the daemon and its game server cleanly.
 *
 * test-runner: own process. It may wait while package.test.ts installs the package for both, which would hold up
 * the short files of a batch.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { finalStage, parseStages, type Stage } from '../_support/dockerfile.ts';
import { freePort, ROOT, waitFor } from '../_support/env.ts';
import { demoRunning, imageFolders, writeDemoSettings } from '../_support/image-run.ts';
import { alive, killGroup } from '../_support/procs.ts';
import { installedPackage } from './_support/package.ts';

const run = promisify(execFile);
const test = suite('dist: the container image, run as a process');

const dockerfile = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
const stages: Stage[] = parseStages(dockerfile);
const image = finalStage(stages);

test('image :: the Dockerfile: multi-stage, production dependencies only, non-root, a HEALTHCHECK, node runs bin/watchdog', () => {
  assert.ok(stages.length >= 2, 'multi-stage');
  const last = stages.at(-1)!;
  const copies = last.instructions.filter((i) => i.op === 'COPY').map((i) => i.args);
  // The final stage takes node_modules only from a stage that installed with --omit=dev.
  const nodeModules = copies.find((c) => / node_modules$/.test(c));
  const from = /--from=(\S+)/.exec(nodeModules ?? '')?.[1];
  const depsStage = stages.find((s) => s.name === from);
  assert.ok(depsStage, `node_modules comes from a named stage (${nodeModules})`);
  assert.ok(
    depsStage.instructions.some((i) => i.op === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args)),
    `stage ${from} installs production dependencies only`,
  );
  assert.not.ok(
    copies.some((c) => /(^|\s)(\.|src|test|bench)(\s|$)/.test(c.split(/\s+/).slice(0, -1).join(' '))),
    'no sources copied into the image',
  );
  assert.ok(image.user && !['root', '0'].includes(image.user.split(':')[0] ?? ''), `non-root user (${image.user})`);
  assert.ok(image.healthcheck, 'a HEALTHCHECK');
  assert.equal(image.entrypoint.slice(0, 2), ['node', '/app/bin/watchdog']);
  assert.ok(image.env.ASPNETCORE_URLS, 'the image listens where ASPNETCORE_URLS says');
});

interface Running {
  proc: ChildProcess;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

// The processes this suite started, ended in `after` if a test failed half-way.
const started: { daemon?: ChildProcess; server?: number } = {};

test.after(() => {
  if (started.daemon?.pid && started.daemon.exitCode === null) started.daemon.kill('SIGKILL');
  killGroup(started.server);
});

test('image :: ENTRYPOINT + CMD with the image ENV and WORKDIR: /health, the HEALTHCHECK, env overrides, then SIGTERM', async () => {
  const { pkg } = await installedPackage();
  const { root, config, data } = await imageFolders('wd-image-');
  try {
    // The image's absolute paths, on this machine.
    const mounts: [string, string][] = [
      ['/app/', `${pkg}/`],
      ['/config/', `${config}/`],
      ['/data/', `${data}/`],
    ];
    const here = (s: string) => {
      for (const [from, to] of mounts) if (s.startsWith(from)) return to + s.slice(from.length);
      for (const [from, to] of mounts) if (`${s}/` === from) return to.slice(0, -1);
      return s;
    };
    const daemonPort = await freePort();
    const gamePort = await freePort();
    const token = 'token-from-the-environment';
    // The file has no ApiToken and no Urls: they come from the environment, as an operator's `docker run -e`
    // (or a Kubernetes Secret) gives them. The game server is the image's own demo server.
    await writeDemoSettings(config, { daemonPort, gamePort, runCommand: here('/app/bin/demo-server') });
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: root,
      ...Object.fromEntries(Object.entries(image.env).map(([k, v]) => [k, here(v)])),
      // Overrides, as `docker run -e` adds them: the test listens on the loopback only, on a free port.
      ASPNETCORE_URLS: `http://127.0.0.1:${daemonPort}`,
      Servers__Instances__main__ApiToken: token,
    };
    const command = [...image.entrypoint, ...image.cmd].map(here);
    assert.is(command[0], 'node');
    let output = '';
    const proc = spawn(process.execPath, command.slice(1), { cwd: here(image.workdir), env, stdio: 'pipe' });
    started.daemon = proc;
    proc.stdout?.on('data', (b: Buffer) => (output += b.toString()));
    proc.stderr?.on('data', (b: Buffer) => (output += b.toString()));
    const daemon: Running = {
      proc,
      exit: new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal }))),
      output: () => output,
    };

    const base = `http://127.0.0.1:${daemonPort}`;
    const health = await waitFor(
      'GET /health',
      async () => {
        if (proc.exitCode !== null) throw new Error(`the daemon exited: ${daemon.output()}`);
        const res = await fetch(`${base}/health`);
        return res.ok ? ((await res.json()) as { status: string; version: string }) : undefined;
      },
      15_000,
    );
    assert.ok(health.version, 'health carries the version');

    // The HEALTHCHECK, with the container's environment, finds the daemon through ASPNETCORE_URLS.
    const [hcNode, ...hcArgs] = (image.healthcheck ?? []).map(here);
    assert.is(hcNode, 'node');
    await run(process.execPath, hcArgs, { env, cwd: here(image.workdir) });
    // ... and fails when nothing answers there.
    const elsewhere = { ...env, ASPNETCORE_URLS: `http://127.0.0.1:${await freePort()}` };
    const down = await run(process.execPath, hcArgs, { env: elsewhere }).then(
      () => 0,
      (err: { code: number }) => err.code,
    );
    assert.is(down, 1, 'the HEALTHCHECK fails without a daemon');

    // The instance token came from Servers__Instances__main__ApiToken; the demo server (compiled, from /app/bin)
    // launches and checks in.
    const status = await demoRunning(base, token, 20_000);
    started.server = status.pid;
    assert.ok(existsSync(join(data, 'instances/main')), 'instance folders go to the WORKDIR volume, /data');
    const wrong = await fetch(`${base}/instances/main/status`, {
      headers: { authorization: `Basic ${Buffer.from('main:wrong').toString('base64')}` },
    });
    assert.is(wrong.status, 401);

    // docker stop: SIGTERM to PID 1. The daemon shuts the server down gracefully and exits 0.
    proc.kill('SIGTERM');
    const ended = await Promise.race([
      daemon.exit,
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000).unref()),
    ]);
    assert.ok(ended, `the daemon exits after SIGTERM: ${daemon.output().slice(-2000)}`);
    assert.equal(ended, { code: 0, signal: null }, daemon.output().slice(-2000));
    await waitFor('the game server gone', () => status.pid !== undefined && !alive(status.pid), 5_000);
    assert.match(daemon.output(), /^\{/m, 'JSON log lines (--log-format json from CMD)');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test.run();
