/**
 * The packed package, installed into a temp project outside the checkout (so nothing resolves from the repository's
 * node_modules): the build, `npm pack`, `npm install <tarball>`. Shared by the suites of test/dist/, which each need
 * an installed copy and would otherwise pay 8 CPU-s apiece: once per `npm test` (in the runner's folder for the
 * run, by whichever file asks first, the others waiting), or once per process when a file runs alone.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, waitFor } from '../../_support/env.ts';
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

const installedIn = (root: string, files: string[]): Installed => {
  const project = join(root, 'project');
  return { project, pkg: join(project, 'node_modules/game-server-watchdog'), files };
};

/** Packs and installs into `root`; its `files.json`, written last, lists the tarball's files. */
async function install(root: string): Promise<Installed> {
  await mkdir(root, { recursive: true });
  const npm = (args: string[], cwd: string) =>
    run('npm', args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false' }, maxBuffer: 16 << 20 });
  // `npm run build`, or the one this test run already made (test/_support/runtime.ts); prepack would run it again.
  await ensureDist();
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
  const files = report.files.map((f) => f.path);
  await writeFile(join(root, 'files.json'), JSON.stringify(files));
  return installedIn(root, files);
}

/**
 * The run's copy in `<run folder>/package`: the first file to take the lock installs into a folder of its own and
 * renames it into place; the others wait for that. A failed install frees the lock, so a waiter tries in its turn.
 */
async function sharedInstall(runDir: string): Promise<Installed> {
  const dir = join(runDir, 'package');
  const lock = `${dir}.lock`;
  const read = () => installedIn(dir, JSON.parse(readFileSync(join(dir, 'files.json'), 'utf8')) as string[]);
  let held = false;
  await waitFor(
    'the packed package installed by another test file',
    () => {
      if (existsSync(dir)) return true;
      try {
        mkdirSync(lock);
        held = true;
      } catch {
        return false;
      }
      return true;
    },
    240_000,
    200,
  );
  try {
    // Checked again with the lock held: the last holder may have finished just before.
    if (held && !existsSync(dir)) {
      const mine = `${dir}.${process.pid}`;
      await install(mine);
      renameSync(mine, dir);
    }
    return read();
  } finally {
    if (held) rmSync(lock, { recursive: true, force: true });
  }
}

/** The installed package, built and installed on first use; later callers share it. */
export function installedPackage(): Promise<Installed> {
  installing ??= (async () => {
    const runDir = process.env.WATCHDOG_TEST_RUN_DIR;
    if (runDir) return sharedInstall(runDir);
    const root = await mkdtemp(join(tmpdir(), 'wd-dist-'));
    // Every suite of the process may use the copy, so it goes when the process does (synchronously: 'exit').
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
    return install(root);
  })();
  return installing;
}
