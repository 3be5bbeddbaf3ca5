import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UpdateError, UsageError } from '../../errors.ts';
import { hashFile } from '../../regular-file.ts';
import { writeFileAtomic } from '../../store/atomic-file.ts';
import { isClientArchiveName, SERVER_ARCHIVE_EXAMPLES, serverArchivePlatform } from '../archive/names.ts';
import { type ManifestArchive, type ManifestBuild, parseManifest } from './schema.ts';

function normaliseBase(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UsageError(`--base-url "${baseUrl}" is not an absolute URL (e.g. https://cdn.example.org/builds/)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--base-url must be http or https, got ${url.protocol}`);
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

/** The manifest as it stands, extra fields kept, or a new one. */
async function readManifest(path: string): Promise<{ builds: Record<string, unknown>; [k: string]: unknown }> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw new UpdateError(`cannot read the manifest ${path}`, { cause: err });
  });
  if (text === null) return { builds: {} };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UpdateError(`${path} is not JSON; fix or move it, it was left as it is`, { cause: err });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new UpdateError(`${path} is not a manifest (expected an object)`);
  const builds = (doc as { builds?: unknown }).builds ?? {};
  if (typeof builds !== 'object' || builds === null || Array.isArray(builds)) {
    throw new UpdateError(`${path} is not a manifest ("builds" is not an object); it was left as it is`);
  }
  return { ...(doc as Record<string, unknown>), builds: builds as Record<string, unknown> };
}

/** As written: the hash always, and the size. */
async function describeArchive(dir: string, name: string, base: string) {
  const { sha256, bytes } = await hashFile(join(dir, name));
  // Upper-case hex, as Robust.Cdn writes it; readers compare case-insensitively.
  return { url: base + encodeURIComponent(name), sha256: sha256.toUpperCase(), size: bytes };
}

/**
 * Adds the archives in `dir` (a server archive per platform key in the names, a client one) to the manifest `out`
 * (default `<dir>/manifest.json`) as a build keyed by a new ISO-8601 time; each URL is `baseUrl` plus the name.
 */
export async function publishBuild(opts: { dir: string; baseUrl: string; out?: string; now?: Date }) {
  const dir = resolve(opts.dir);
  const base = normaliseBase(opts.baseUrl);
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory())
    throw new UsageError(`${dir} is not a folder; give the folder that holds the build's archives`);
  const names = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();

  const servers: Record<string, string> = {};
  for (const name of names) {
    const platform = serverArchivePlatform(name);
    if (platform === undefined) continue;
    if (servers[platform])
      throw new UsageError(`two server archives for ${platform} in ${dir}: ${servers[platform]} and ${name}; keep one`);
    servers[platform] = name;
  }
  if (Object.keys(servers).length === 0) {
    throw new UsageError(`no server archive in ${dir}: looked for file names like ${SERVER_ARCHIVE_EXAMPLES}`);
  }
  const clients = names.filter(isClientArchiveName);
  if (clients.length > 1) throw new UsageError(`several client archives in ${dir} (${clients.join(', ')}); keep one`);
  const client = clients[0];

  const manifestPath = resolve(opts.out ?? join(dir, 'manifest.json'));
  const manifest = await readManifest(manifestPath);
  let at = (opts.now ?? new Date()).getTime();
  while (new Date(at).toISOString() in manifest.builds) at += 1; // two releases in one millisecond stay distinct
  const key = new Date(at).toISOString();

  const server: Record<string, ManifestArchive & { size: number }> = {};
  for (const [platform, name] of Object.entries(servers)) server[platform] = await describeArchive(dir, name, base);
  const build: ManifestBuild = {
    time: key,
    ...(client ? { client: await describeArchive(dir, client, base) } : {}),
    server,
  };
  parseManifest({ builds: { [key]: build } }, `${manifestPath} (the build being added)`); // one schema for writer and reader
  manifest.builds[key] = build;

  // Atomic, so a static server never hands out half a manifest; readable by that server.
  await writeFileAtomic(manifestPath, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o644 }).catch((err) => {
    throw new UpdateError(`cannot write the manifest ${manifestPath}`, { cause: err });
  });
  return { key, manifestPath, servers, client };
}
