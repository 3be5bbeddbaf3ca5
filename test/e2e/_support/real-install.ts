/**
 * Helpers for migration.test.ts (not a suite itself): lay out the real-watchdog installation of
 * test/fixtures/migration/ in a folder, a Jenkins that is down, and what /proc says about a server.
 */

import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { ROOT } from '../../_support/env.ts';
import { serveLoopback } from '../../_support/webhook.ts';

export const INSTALL_FIXTURE = join(ROOT, 'test/fixtures/migration');

/** The fixture's files, copied as they are but for their `${NAME}` placeholders. */
const FILES = [
  'appsettings.yml',
  'appsettings.Development.yml',
  'instances/wizards/config.toml',
  'instances/lrp/config.toml',
];

/** Replaces every `${NAME}`; a placeholder without a value is an error, so no file is left half filled. */
export function fillPlaceholders(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{([A-Z0-9_]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for the placeholder \${${name}}`);
    return value;
  });
}

/**
 * Copies the installation into `dir` with the placeholders filled, and installs each instance's build as the real
 * watchdog finds it: `instances/<key>/bin/Robust.Server` (here a link to a fixture game server script).
 * Returns the main file's text.
 */
export async function installFixture(
  dir: string,
  values: Readonly<Record<string, string>>,
  server: string,
  keys: readonly string[],
): Promise<string> {
  for (const file of FILES) {
    const text = fillPlaceholders(await readFile(join(INSTALL_FIXTURE, file), 'utf8'), values);
    await mkdir(join(dir, file, '..'), { recursive: true });
    await writeFile(join(dir, file), text);
  }
  for (const key of keys) {
    await mkdir(join(dir, 'instances', key, 'bin'), { recursive: true });
    await mkdir(join(dir, 'instances', key, 'data'), { recursive: true });
    await symlink(server, join(dir, 'instances', key, 'bin', 'Robust.Server'));
  }
  return readFile(join(dir, 'appsettings.yml'), 'utf8');
}

/** A Jenkins that is down (503 to everything, as one does while it restarts), recording what was asked. */
export interface DownJenkins {
  url: string;
  paths: string[];
  close(): Promise<void>;
}

export async function startDownJenkins(): Promise<DownJenkins> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    res
      .writeHead(503, { 'Content-Type': 'text/html' })
      .end('<h1>Please wait while Jenkins is getting ready to work...</h1>');
  });
  return { ...(await serveLoopback(server, '/jenkins')), paths };
}

/** The value of `--cvar <name>=…` in a command line (the last one, as the engine reads it), or null. */
export function cvarOf(cmdline: readonly string[], name: string): string | null {
  let found: string | null = null;
  cmdline.forEach((arg, i) => {
    if (i > 0 && cmdline[i - 1] === '--cvar' && arg.startsWith(`${name}=`)) found = arg.slice(name.length + 1);
  });
  return found;
}

/** A process's environment from /proc/<pid>/environ. */
export async function environOf(pid: number): Promise<Map<string, string>> {
  const raw = await readFile(`/proc/${pid}/environ`, 'utf8');
  const env = new Map<string, string>();
  for (const entry of raw.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return env;
}
