import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { UpdateError } from '../errors.ts';

/**
 * The client archive a launcher downloads when the watchdog, not the game server, hosts it (Local, and non-hybrid
 * Git): it lives in `<instance>/binaries/`, is served at `/instances/<key>/binaries/<name>`, and the server learns
 * where and what it is through `--cvar build.download_url=…` and `--cvar build.hash=…` (REFERENCE.md §1.2).
 */

/** Upper-case hex SHA-256 of a file, streamed (client zips are hundreds of MB). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex').toUpperCase();
}

/** A client zip name must be a plain file name: nothing may reach outside `binaries/`. */
export function isPlainFileName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/**
 * The client zip in `binariesDir`: `preferred` (`Updates.ClientZip`) when given, otherwise the only `.zip` there.
 * Throws UpdateError saying what to put where when the folder or the zip is missing, or the choice is ambiguous.
 */
export async function findClientZip(binariesDir: string, preferred: string | undefined): Promise<string> {
  let names: string[];
  try {
    const entries = await readdir(binariesDir, { withFileTypes: true });
    names = entries.filter((e) => e.isFile() && e.name.toLowerCase().endsWith('.zip') && !e.name.startsWith('.')).map((e) => e.name);
  } catch (err) {
    throw new UpdateError(
      `expected a binaries/ folder holding the client zip at ${binariesDir}; create it and put the client zip (e.g. SS14.Client.zip) there`,
      { cause: err },
    );
  }
  if (preferred !== undefined && preferred !== '') {
    if (!isPlainFileName(preferred)) {
      throw new UpdateError(`Updates.ClientZip must be a file name inside binaries/, got "${preferred}"`);
    }
    const found = await stat(join(binariesDir, preferred)).catch(() => null);
    if (!found?.isFile()) {
      throw new UpdateError(`Updates.ClientZip names ${preferred}, but there is no such file in ${binariesDir}`);
    }
    return preferred;
  }
  if (names.length === 1) return names[0] as string;
  if (names.length === 0) {
    throw new UpdateError(`no client zip in ${binariesDir}: put the client zip (e.g. SS14.Client.zip) there`);
  }
  throw new UpdateError(
    `${binariesDir} holds several zips (${names.sort().join(', ')}): set Updates.ClientZip to the one clients should download`,
  );
}

interface CachedHash {
  path: string;
  size: number;
  mtimeMs: number;
  hash: string;
}

/**
 * Builds the `build.*` cvars for one client zip. The hash is remembered while the file's size and modification time
 * stay the same, so a crash-looping server does not rehash a large zip at every launch.
 */
export function createClientCvars(opts: { key: string; dir: string; publicBaseUrl: string }) {
  let cached: CachedHash | null = null;

  return async function clientCvars(zipName: string): Promise<Array<[string, string]>> {
    const path = join(opts.dir, 'binaries', zipName);
    let info;
    try {
      info = await stat(path);
    } catch (err) {
      throw new UpdateError(`the client zip ${path} is missing`, { cause: err });
    }
    if (!cached || cached.path !== path || cached.size !== info.size || cached.mtimeMs !== info.mtimeMs) {
      cached = { path, size: info.size, mtimeMs: info.mtimeMs, hash: await sha256File(path) };
    }
    const url = new URL(`instances/${encodeURIComponent(opts.key)}/binaries/${encodeURIComponent(zipName)}`, opts.publicBaseUrl);
    return [
      ['build.download_url', url.href],
      ['build.hash', cached.hash],
    ];
  };
}
