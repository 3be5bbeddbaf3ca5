/**
 * The container image, built for real and run: deploy/image.sh builds the Dockerfile with buildah
 * (`--isolation chroot`, FROM a base made of this machine's node where node:20-bookworm-slim cannot be pulled),
 * then the image's own ENTRYPOINT + CMD runs in a container of it with a temp /config and /data mounted. Chroot
 * isolation shares the host's network and process table, so the daemon listens on a free 127.0.0.1 port (the
 * ASPNETCORE_URLS override an operator gives with `-e`) and its processes are read from this machine's /proc.
 * Minutes long, so not part of `npm test`: `npm run test:image`, which .ci/run runs after it.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chown, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { finalStage, parseStages } from '../_support/dockerfile.ts';
import { freePort, ROOT, waitFor } from '../_support/env.ts';
import { demoRunning, imageFolders, writeDemoSettings } from '../_support/image-run.ts';
import { alive, killGroup } from '../_support/procs.ts';
import { buildah, type ImageConfig, imageConfig, removeQuietly, whyNoBuildah } from './_support/buildah.ts';

const run = promisify(execFile);
const test = suite('image: built with buildah, run in a container');
const why = await whyNoBuildah();
if (why) console.log(`image suite skipped: ${why}`);
const it = why ? test.skip : test;

// Names this suite owns: removed at the end whatever happened. The base image deploy/image.sh makes is kept (it
// is reused by the next build, and the script names it).
const tag = `localhost/watchdog-image-test:${process.pid}`;
const containers: string[] = [];
const started: { run?: ChildProcess; daemon?: number; server?: number } = {};
let config: ImageConfig | undefined;

/**
 * Ends what the run test started, if a failure left it running. The daemon first: `buildah run` then ends by
 * itself and removes its run folder (/var/tmp/buildah*), which a SIGKILL to it would leave behind; it gets one
 * only if it is still there after 10 s.
 */
async function stopAll(): Promise<void> {
  if (started.daemon && alive(started.daemon)) process.kill(started.daemon, 'SIGKILL');
  killGroup(started.server);
  const proc = started.run;
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const ended = new Promise((r) => proc.once('exit', r));
  const within = (ms: number) => Promise.race([ended, new Promise((r) => setTimeout(() => r('late'), ms).unref())]);
  if ((await within(10_000)) !== 'late') return;
  proc.kill('SIGKILL');
  await within(10_000);
}

test.after(async () => {
  await stopAll();
  if (!why) await removeQuietly(containers, tag);
});

it('image :: deploy/image.sh builds the Dockerfile into an image', async () => {
  const began = Date.now();
  // No layer cache (the script's default): the build leaves no unnamed images, only the tag removed at the end.
  const out = await run('bash', [join(ROOT, 'deploy/image.sh'), '--tag', tag], {
    cwd: ROOT,
    env: { ...process.env, WATCHDOG_IMAGE_LAYERS: '0' },
    timeout: 25 * 60_000,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((err: { stderr?: string; message: string }) => {
    throw new Error(`deploy/image.sh failed: ${(err.stderr ?? err.message).slice(-3000)}`, { cause: err });
  });
  assert.is(out.stdout.trim(), tag, 'the script prints the image it built');
  const size = await buildah(['images', '--format', '{{.Size}}', tag]);
  console.log(`image: ${tag} built in ${Math.round((Date.now() - began) / 1000)} s, ${size}`);
  config = await imageConfig(tag);
});

it("image :: the image's configuration is the Dockerfile's final stage", () => {
  assert.ok(config, 'the image was built');
  const stage = finalStage(parseStages(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')));
  assert.is(config.User, 'node');
  assert.equal(config.Entrypoint, stage.entrypoint);
  assert.equal(config.Cmd, stage.cmd);
  assert.is(config.WorkingDir, stage.workdir);
  assert.ok(config.Env.includes(`ASPNETCORE_URLS=${stage.env.ASPNETCORE_URLS}`), config.Env.join(' '));
  assert.equal(config.Healthcheck?.Test.slice(1), stage.healthcheck, 'the HEALTHCHECK is kept (docker format)');
});

it('image :: the image holds dist/ and production dependencies: no src/, no TypeScript sources, no dev dependency', async () => {
  assert.ok(config, 'the image was built');
  const ctr = await buildah(['from', '--quiet', '--pull=never', '--name', `watchdog-image-fs-${process.pid}`, tag]);
  containers.push(ctr);
  const root = await buildah(['mount', ctr]);
  const app = join(root, 'app');
  assert.ok(existsSync(join(app, 'dist/app')), 'the compiled programs, /app/dist/app');
  assert.ok(existsSync(join(app, 'bin/watchdog')), '/app/bin/watchdog');
  assert.not.ok(existsSync(join(app, 'src')), 'no /app/src');
  const sources = (await readdir(app, { recursive: true }))
    .filter((f) => !f.startsWith('node_modules/'))
    .filter((f) => /\.(ts|tsx|mts|cts)$/.test(f) && !/\.d\.[mc]?ts$/.test(f));
  assert.equal(sources, [], 'no TypeScript sources outside node_modules');
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const dev = Object.keys(pkg.devDependencies);
  assert.ok(dev.includes('typescript') && dev.includes('tsx'), 'the dev dependencies name typescript and tsx');
  assert.equal(
    dev.filter((d) => existsSync(join(app, 'node_modules', d))),
    [],
    'no dev dependency in /app/node_modules',
  );
  const missing = Object.keys(pkg.dependencies).filter((d) => !existsSync(join(app, 'node_modules', d)));
  assert.equal(missing, [], 'every production dependency is there');
  assert.is((await stat(join(root, 'data'))).uid, 1000, '/data belongs to node');
  await buildah(['umount', ctr]);
});

/** A line of /proc/<pid>/status, e.g. `Uid:\t1000\t1000\t1000\t1000` → ['1000', '1000', '1000', '1000']. */
async function procStatus(pid: number, field: string): Promise<string[]> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const line = text.split('\n').find((l) => l.startsWith(`${field}:`));
  return line?.split(/\s+/).slice(1) ?? [];
}

it('image :: ENTRYPOINT + CMD in a container: /health, the HEALTHCHECK, the demo server as uid 1000, then SIGTERM', async () => {
  assert.ok(config, 'the image was built');
  const began = Date.now();
  const { root: dir, config: cfg, data } = await imageFolders('wd-image-run-');
  try {
    // Like a volume an operator prepares: writable by the image's user, uid 1000.
    await chown(data, 1000, 1000);
    const port = await freePort();
    const gamePort = await freePort();
    const token = `image-test-${process.pid}`;
    await writeDemoSettings(cfg, { daemonPort: port, gamePort, runCommand: '/app/bin/demo-server' });
    // The token in the secrets file beside it, not in any process's argv.
    await writeFile(
      join(cfg, 'appsettings.Secret.yml'),
      `Servers:\n  Instances:\n    main:\n      ApiToken: ${token}\n`,
    );

    const ctr = await buildah(['from', '--quiet', '--pull=never', '--name', `watchdog-image-run-${process.pid}`, tag]);
    containers.push(ctr);
    const urls = `ASPNETCORE_URLS=http://127.0.0.1:${port}`;
    const mounts = ['-v', `${cfg}:/config:ro`, '-v', `${data}:/data`];
    const argv = ['run', '--isolation', 'chroot', ...mounts, '--env', urls, ctr, '--'];
    let output = '';
    const proc = spawn('buildah', [...argv, ...config.Entrypoint, ...config.Cmd], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.run = proc;
    proc.stdout.on('data', (b: Buffer) => (output += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));

    const base = `http://127.0.0.1:${port}`;
    const health = await waitFor(
      'GET /health from the container',
      async () => {
        if (proc.exitCode !== null) throw new Error(`the container exited: ${output.slice(-2000)}`);
        const res = await fetch(`${base}/health`);
        return res.ok ? ((await res.json()) as { status: string; pid: number }) : undefined;
      },
      60_000,
      200,
    );
    started.daemon = health.pid;
    assert.is(health.status, 'ok');
    // The same process table: the pid /health names is the daemon's here, node running /app/bin/watchdog as
    // node (1000) inside the container's root, not this machine's.
    const cmdline = (await readFile(`/proc/${health.pid}/cmdline`, 'utf8')).split('\0');
    assert.match(cmdline[0] ?? '', /(^|\/)node$/, cmdline.join(' '));
    assert.is(cmdline[1], '/app/bin/watchdog');
    assert.equal((await procStatus(health.pid, 'Uid'))[0], '1000');
    const daemonRoot = await readlink(`/proc/${health.pid}/root`);
    assert.is.not(daemonRoot, '/', 'the daemon runs in the image, not in this machine');

    // The HEALTHCHECK, run as the container runtime would: inside the container, with its environment.
    const hc = config.Healthcheck?.Test.slice(1) ?? [];
    await buildah(['run', '--isolation', 'chroot', '--env', urls, ctr, '--', ...hc]);

    const status = await demoRunning(base, token, 60_000);
    started.server = status.pid;
    assert.equal(await procStatus(status.pid, 'Uid'), ['1000', '1000', '1000', '1000'], 'the server runs as uid 1000');
    assert.is(await readlink(`/proc/${status.pid}/root`), daemonRoot, 'the server runs in the same container');
    assert.ok(existsSync(join(data, 'instances/main')), 'instances go to the /data volume');

    // docker stop: SIGTERM to the container's main process (buildah run itself does not forward it).
    process.kill(health.pid, 'SIGTERM');
    const code = await Promise.race([
      exit,
      new Promise<'running'>((r) => setTimeout(() => r('running'), 60_000).unref()),
    ]);
    assert.is(code, 0, `the container ends with exit 0 after SIGTERM: ${output.slice(-2000)}`);
    await waitFor('the demo server gone', () => !alive(status.pid), 10_000);
    assert.match(output, /^\{.*"msg"/m, 'JSON log lines (--log-format json from CMD)');
    console.log(`image: the container ran and stopped in ${Math.round((Date.now() - began) / 1000)} s`);
  } finally {
    await stopAll();
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  }
});

test.run();
