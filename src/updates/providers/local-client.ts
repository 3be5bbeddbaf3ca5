import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UpdateError } from '../../errors.ts';
import { hashFile } from '../../regular-file.ts';

/*
 * The client zip the watchdog hosts (Local, non-hybrid Git): in `<instance>/binaries/`, served at
 * `/instances/<key>/binaries/<name>`, told to the server by `--cvar build.download_url=…` and `build.hash=…`.
 */

/** Upper-case hex SHA-256, as the engine's `build.hash` carries it. */
export async function clientZipHash(path: string): Promise<string> {
  return (await hashFile(path)).sha256.toUpperCase();
}

const DEFAULT_CLIENT_ZIP = 'SS14.Client.zip';

/** `Updates.ClientZip`, else `SS14.Client.zip` (all the real watchdog serves); missing, an UpdateError says what to do. */
export async function findClientZip(binariesDir: string, preferred: string | undefined): Promise<string> {
  const entries = await readdir(binariesDir, { withFileTypes: true }).catch((err: unknown) => {
    throw new UpdateError(
      `expected a binaries/ folder holding the client zip at ${binariesDir}; create it and put the client zip (${DEFAULT_CLIENT_ZIP}) there`,
      { cause: err },
    );
  });
  const names = entries
    .filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.zip') && !e.name.startsWith('.'))
    .map((e) => e.name);
  const given = preferred !== undefined && preferred !== '';
  const name = given ? preferred : DEFAULT_CLIENT_ZIP;
  // Nothing may reach outside binaries/.
  if (given && (name === '.' || name === '..' || /[/\\\0]/.test(name))) {
    throw new UpdateError(`Updates.ClientZip must be a file name inside binaries/, got "${name}"`);
  }
  const found = await stat(join(binariesDir, name)).catch(() => null);
  if (found?.isFile()) return name;
  const others = names.filter((n) => n !== name).sort();
  const there = others.length > 0 ? ` (it holds ${others.join(', ')}: set Updates.ClientZip to name one of those)` : '';
  throw new UpdateError(
    given
      ? `Updates.ClientZip names ${name}, but there is no such file in ${binariesDir}${there}`
      : `no client zip in ${binariesDir}: put it there as ${DEFAULT_CLIENT_ZIP}, or name it with Updates.ClientZip${there}`,
  );
}

export function clientDownloadUrl(publicBaseUrl: string, key: string, zipName: string): string {
  return new URL(`instances/${encodeURIComponent(key)}/binaries/${encodeURIComponent(zipName)}`, publicBaseUrl).href;
}

/** The `build.*` cvars of a client zip; its hash kept while size and mtime stay, for crash-looping launches. */
export function createClientCvars(opts: { key: string; dir: string; publicBaseUrl: string }) {
  let cached: { path: string; size: number; mtimeMs: number; hash: string } | null = null;

  return async function clientCvars(zipName: string): Promise<Array<[string, string]>> {
    const path = join(opts.dir, 'binaries', zipName);
    const info = await stat(path).catch((err: unknown) => {
      throw new UpdateError(`the client zip ${path} is missing`, { cause: err });
    });
    if (!cached || cached.path !== path || cached.size !== info.size || cached.mtimeMs !== info.mtimeMs) {
      cached = { path, size: info.size, mtimeMs: info.mtimeMs, hash: await clientZipHash(path) };
    }
    return [
      ['build.download_url', clientDownloadUrl(opts.publicBaseUrl, opts.key, zipName)],
      ['build.hash', cached.hash],
    ];
  };
}
