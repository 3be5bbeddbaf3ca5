import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { FetchError } from 'ofetch';
import { UsageError } from '../../errors.ts';
import type { FileListing } from '../../http/schemas.ts';
import { formatBytes } from '../../store/disk-space.ts';
import { instanceKeyArg, parseCommandArgs } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import { type Endpoint, explainFailure, instancePath, TIMEOUT_MS } from '../client/http.ts';
import { atInstance, TARGET_FLAGS, TARGET_USAGE, targetOf } from '../client/target.ts';
import type { Command, CommandOptions } from '../registry.ts';

export const filesUsage = `usage: watchdog files <key> [path] [--json] [--url URL] [--token T] [--config F]
  Lists the folders the instance shares (Files.Folders: by default data/replays, logs, dumps) or, with a
  path such as logs or data/replays/round-12, the files and folders in it: name, size and modification time.
  --json        the listing as JSON
${TARGET_USAGE}`;

export const fetchFileUsage = `usage: watchdog fetch <key> <path> [--out FILE] [--continue] [--url URL] [--token T] [--config F]
  Downloads one shared file (see watchdog files), streamed to FILE (default: its name in the current folder).
  --out FILE    where to write it (- for standard output)
  --continue    FILE is a partial download: ask only for the bytes after it and append them
${TARGET_USAGE}`;

export const filesOptions = { ...TARGET_FLAGS, json: { type: 'boolean' } } as const satisfies CommandOptions;
export const fetchFileOptions = {
  ...TARGET_FLAGS,
  out: { type: 'string' },
  continue: { type: 'boolean' },
} as const satisfies CommandOptions;

/** `name  size  time` columns, folders marked with a trailing `/`. */
export function listingTable(listing: FileListing): string {
  const rows = listing.entries.map((e) => [
    e.type === 'folder' ? `${e.name}/` : e.name,
    e.type === 'folder' ? '-' : formatBytes(e.size),
    e.modified.replace(/\.\d+Z$/, 'Z'),
  ]);
  const width = (i: number) => Math.max(...rows.map((r) => (r[i] ?? '').length), 4);
  const lines = rows.map(([name = '', size = '', time = '']) =>
    [name.padEnd(width(0)), size.padStart(width(1)), time].join('  '),
  );
  if (listing.truncated > 0) lines.push(`… and ${listing.truncated} more`);
  return lines.join('\n');
}

/**
 * One streamed GET of a shared path (TIMEOUT_MS until its headers, then as long as it takes); a refusal is put in an
 * ofetch error, so explainFailure words it as for every command.
 */
async function getShared(
  ep: Endpoint,
  path: string,
  what: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new DOMException('no answer', 'TimeoutError')), TIMEOUT_MS);
  const url = instancePath(ep, ['files', ...path.split('/').filter(Boolean).map(encodeURIComponent)].join('/'));
  const res = await fetch(url, {
    headers: { authorization: ep.authorization, ...headers },
    signal: abort.signal,
  })
    .catch((err: unknown) => {
      throw explainFailure(err, ep, what);
    })
    .finally(() => clearTimeout(timer));
  if (res.ok || res.status === 416) return res;
  const data: unknown = await res.json().catch(() => undefined);
  const reason = typeof data === 'object' && data !== null ? (data as { error?: unknown }).error : undefined;
  // The route's own refusals name the path; the rest (credentials, unknown instance) read as for every command.
  if (
    (res.status === 404 && reason !== 'unknown instance') ||
    (res.status === 403 && /shared folder/.test(`${reason}`))
  )
    throw new ClientError(
      `${res.status}: ${path || '/'} of ${ep.key}: ${res.status === 404 ? 'no such file or folder (see watchdog files)' : reason}`,
    );
  throw explainFailure(Object.assign(new FetchError(`${res.status}`), { status: res.status, data }), ep, what);
}

const isListing = (res: Response) => res.headers.get('content-type')?.startsWith('application/json') === true;

/** `watchdog files <key> [path]`: GET /instances/<key>/files/<path>. */
export const files: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, filesOptions, filesUsage);
  const [key, path = ''] = instanceKeyArg(positionals, filesUsage, {});
  const res = await atInstance(targetOf('files', values), key, (ep) =>
    getShared(ep, path, `the files of ${path || 'the shared folders'}`),
  );
  if (!isListing(res)) {
    // A file: not read into memory here.
    await res.body?.cancel();
    throw new ClientError(`${path} is a file, not a folder: download it with watchdog fetch ${key} ${path}`);
  }
  const listing = (await res.json()) as FileListing;
  if (values.json) process.stdout.write(`${JSON.stringify(listing, null, 2)}\n`);
  else if (listing.entries.length === 0) process.stdout.write(`${path || 'no shared folders exist yet'}: empty\n`);
  else process.stdout.write(`${listingTable(listing)}\n`);
  return 0;
};

/** `watchdog fetch <key> <path>`: GET /instances/<key>/files/<path>, streamed to a file (or the rest of it). */
export const fetchFile: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, fetchFileOptions, fetchFileUsage);
  const [key, path = ''] = instanceKeyArg(positionals, fetchFileUsage, {
    missing: () => 'missing the path of the file',
  });
  const out = values.out ?? basename(path);
  if (values.continue && out === '-') throw new UsageError(`--continue needs --out FILE\n${fetchFileUsage}`);
  const have = values.continue ? ((await stat(out).catch(() => null))?.size ?? 0) : 0;
  const res = await atInstance(targetOf('fetch', values), key, (ep) =>
    getShared(ep, path, `the file ${path}`, have > 0 ? { range: `bytes=${have}-` } : {}),
  );
  if (res.status === 416) {
    await res.body?.cancel();
    process.stderr.write(`${out} is already complete (${formatBytes(have)})\n`);
    return 0;
  }
  if (isListing(res) || !res.body) {
    await res.body?.cancel();
    throw new ClientError(`${path} is a folder: list it with watchdog files ${key} ${path}`);
  }
  const append = res.status === 206;
  const sink = out === '-' ? process.stdout : createWriteStream(out, { flags: append ? 'a' : 'w' });
  await pipeline(Readable.fromWeb(res.body as unknown as NodeReadableStream<Uint8Array>), sink);
  if (out !== '-') {
    const size = (await stat(out)).size;
    process.stderr.write(`${out}: ${formatBytes(size)}${append ? ` (resumed after ${formatBytes(have)})` : ''}\n`);
  }
  return 0;
};
