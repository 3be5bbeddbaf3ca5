/**
 * The kit as a package: the packed tarball, installed into a project of its own, gives plain
 * JavaScript the kit (`game-server-watchdog/kit`, `/kit/probe`) with its types, and a `watchdog` bin that runs
 * the compiled daemon with no TypeScript loader anywhere.
 *
 * test-runner: own process. It may wait while image.test.ts installs the package for both, which would hold up
 * the short files of a batch.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../_support/env.ts';
import { installedPackage } from './_support/package.ts';

const run = promisify(execFile);
const test = suite('dist: the packed package');

// Generous: the first call builds, packs and installs (about 10-20 s; more when the npm cache is cold).
test.before(async () => {
  await installedPackage();
});

test('package :: the tarball holds the bundled daemon and demo server, the kit with its types, the dashboard assets; no sources', async () => {
  const { files } = await installedPackage();
  for (const f of [
    'bin/watchdog',
    'bin/runtime.js',
    'dist/package.json',
    'dist/app/watchdog.js',
    'dist/app/demo-server.js',
    'dist/app/assets/index.html',
    'dist/src/kit/index.js',
    'dist/src/kit/index.d.ts',
    'dist/src/kit/probe.d.ts',
    'dist/src/http/dashboard/assets/index.html',
  ]) {
    assert.ok(files.includes(f), `${f} is in the tarball`);
  }
  assert.equal(
    files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('bench/')),
    [],
    'no sources, tests or benchmarks',
  );
});

test('package :: tsx is neither installed nor a production dependency, so nothing can load it at run time', async () => {
  const { project, pkg } = await installedPackage();
  const manifest = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  assert.not.ok('tsx' in (manifest.dependencies ?? {}), 'tsx is not a dependency');
  assert.not.ok(existsSync(join(project, 'node_modules/tsx')), 'node_modules/tsx absent');
  assert.not.ok(existsSync(join(project, 'node_modules/typescript')), 'node_modules/typescript absent');
});

test('package :: plain JavaScript imports the kit, serves /status on 127.0.0.1 and probes it', async () => {
  const { project } = await installedPackage();
  const script = join(project, 'game.mjs');
  await writeFile(
    script,
    `import { createGameApi, serve } from 'game-server-watchdog/kit';
import { probe } from 'game-server-watchdog/kit/probe';
const app = createGameApi({
  status: () => ({ name: 'plain js', players: 3 }),
  info: () => ({ auth: { mode: 'Optional' }, build: null }),
  watchdogToken: () => undefined,
  onShutdown() {},
  onUpdate() {},
});
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, async ({ port }) => {
  const status = await (await fetch('http://127.0.0.1:' + port + '/status')).json();
  const probed = await probe('127.0.0.1:' + port);
  console.log(JSON.stringify({ status, probedName: probed.status?.name }));
  server.close();
});
`,
  );
  const { stdout } = await run(process.execPath, [script], { cwd: project, timeout: 15_000 });
  const out = JSON.parse(stdout) as { status: unknown; probedName: string };
  assert.equal(out.status, { name: 'plain js', players: 3, tags: [] });
  assert.is(out.probedName, 'plain js');
});

test('package :: the kit type-checks from a TypeScript consumer through the exports map', async () => {
  const { project } = await installedPackage();
  await writeFile(
    join(project, 'game.ts'),
    `import { createGameApi, type Info, type Status } from 'game-server-watchdog/kit';
import { probe, type ProbeDetails } from 'game-server-watchdog/kit/probe';
const status: Status = { name: 'typed', players: 0 };
const info: Info = { auth: { mode: 'Optional' }, build: null };
export const app = createGameApi({ status: () => status, info: () => info, watchdogToken: () => undefined, onShutdown() {}, onUpdate() {} });
export const later: Promise<ProbeDetails> = probe('127.0.0.1:1');
// @ts-expect-error: players is a number
export const wrong: Status = { name: 'x', players: 'many' };
`,
  );
  // The checkout's compiler, run on the temp project: the consumer itself has no TypeScript installed.
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck'];
  const r = await run(
    process.execPath,
    [tsc, ...flags, '--types', 'node', '--typeRoots', join(ROOT, 'node_modules/@types'), 'game.ts'],
    {
      cwd: project,
    },
  ).catch((err: { stdout: string; stderr: string }) => ({ stdout: err.stdout, stderr: err.stderr, failed: true }));
  assert.not.ok('failed' in r, `tsc: ${r.stdout}${r.stderr}`);
});

test('package :: watchdog --version and watchdog check run from the installed package', async () => {
  const { project } = await installedPackage();
  const bin = join(project, 'node_modules/.bin/watchdog');
  const version = await run(bin, ['--version'], { cwd: project });
  const { version: expected } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.is(version.stdout.trim(), `watchdog ${expected}`);

  await writeFile(
    join(project, 'appsettings.yml'),
    `Urls: http://127.0.0.1:5999
Servers:
  Instances:
    demo:
      ApiToken: t
      ApiPort: 1212
      UpdateType: Dummy
      RunCommand: ../../node_modules/game-server-watchdog/bin/demo-server
`,
  );
  const check = await run(bin, ['check'], { cwd: project });
  assert.match(check.stdout, 'configuration is valid');
  assert.match(check.stdout, join(project, 'node_modules/game-server-watchdog/bin/demo-server'));
  assert.not.match(check.stderr, 'warning', 'the installed demo-server is found and executable');
});

test.run();
