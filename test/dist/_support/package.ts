/**
 * The packed package, installed once per test process into a temp project outside the checkout (so nothing
 * resolves from the repository's node_modules): the build, `npm pack`, `npm install <tarball>`.
 * Shared by the suites of test/dist/, which each need an installed copy and would otherwise pay ~10 s apiece.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../../_support/env.ts';
import { ensureDist } from '../../_support/runtime.ts';

const run = promisify(execFile);

export interface Installed {
  /** The temp project that installed the tarball; run commands here. */
  project: string;
  /** `<project>/node_modules/game-server-watchdog`: what the tarball unpacked to. */
  pkg: string;
  /** `npm pack --json`'s report: the file list, among others. */
  files: string[];
}

let installing: Promise<Installed> | undefined;

async function install(): Promise<Installed> {
  const root = await mkdtemp(join(tmpdir(), 'wd-dist-'));
  // Every suite of the process may use the copy, so it goes when the process does (synchronously: 'exit').
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  const npm = (args: string[], cwd: string) =>
    run('npm', args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 16 << 20 });
  // `npm run build`, or the one this test run already made (test/_support/runtime.ts); prepack would run it again.
  ensureDist();
  const { stdout } = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', root], ROOT);
  const [report] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  if (!report) throw new Error(`npm pack reported nothing: ${stdout}`);
  const project = join(root, 'project');
  await mkdir(project);
  await writeFile(join(project, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  // Production dependencies from the npm cache where it has them (the checkout's install filled it), else the
  // registry. --ignore-scripts: the package needs no install script, and none of its dependencies may rely on one.
  await npm(
    ['install', join(root, report.filename), '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'],
    project,
  );
  return {
    project,
    pkg: join(project, 'node_modules/game-server-watchdog'),
    files: report.files.map((f) => f.path),
  };
}

/** The installed package, built and installed on first use; later callers share it. */
export function installedPackage(): Promise<Installed> {
  installing ??= install();
  return installing;
}
