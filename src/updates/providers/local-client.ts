import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UpdateError } from '../../errors.ts';
import { hashFile } from '../../regular-file.ts';

/**
 * The client archive a launcher downloads when the watchdog, not the game server, hosts it (Local, and non-hybrid
 * Git): it lives in `<instance>/binaries/`, is served at `/instances/<key>/binaries/<name>`, and the server learns
 * where and what it is through `--cvar build.download_url=…` and `--cvar build.hash=…`, as the real watchdog's
 * `UpdateProviderLocal.cs` passes them.
 */

/** Upper-case hex SHA-256 of a client zip, as the engine's `build.hash` carries it (streamed: hundreds of MB). */
export async function clientZipHash(path: string): Promise<string> {
  return (await hashFile(path)).sha256.toUpperCase();
}

/** A client zip name must be a plain file name: nothing may reach outside `binaries/`. */
export function isPlainFileName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/** The client zip's name when `Updates.ClientZip` does not give one: the name the engine's packaging writes. */
export const DEFAULT_CLIENT_ZIP = 'SS14.Client.zip';

/**
 * The client zip in `binariesDir`: `preferred` (`Updates.ClientZip`) when given, otherwise `SS14.Client.zip`, the
 * one name the real watchdog ever serves. Throws UpdateError saying what to put where when the folder or the zip is
 * missing (naming the zips that are there, which may only need ClientZip set).
 */
export async function findClientZip(binariesDir: string, preferred: string | undefined): Promise<string> {
  let names: string[];
  try {
    const entries = await readdir(binariesDir, { withFileTypes: true });
    names = entries
      .filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.zip') && !e.name.startsWith('.'))
      .map((e) => e.name);
  } catch (err) {
    throw new UpdateError(
      `expected a binaries/ folder holding the client zip at ${binariesDir}; create it and put the client zip (${DEFAULT_CLIENT_ZIP}) there`,
      { cause: err },
    );
  }
  const given = preferred !== undefined && preferred !== '';
  const name = given ? preferred : DEFAULT_CLIENT_ZIP;
  if (given && !isPlainFileName(name)) {
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

/** Where launchers download `zipName` from the watchdog: `<BaseUrl>instances/<key>/binaries/<zipName>`. */
export function clientDownloadUrl(publicBaseUrl: string, key: string, zipName: string): string {
  return new URL(`instances/${encodeURIComponent(key)}/binaries/${encodeURIComponent(zipName)}`, publicBaseUrl).href;
}

/**
 * Builds the `build.*` cvars for one client zip. The hash is remembered while the file's size and modification time
 * stay the same, so a crash-looping server does not rehash a large zip at every launch.
 */
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
