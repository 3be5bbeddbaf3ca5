import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import type { ResolvedConfig } from '../config/resolved.ts';

/** What one watchdog owns alone: its instance root and its working folder. */
export function ownedFolders(config: ResolvedConfig): string[] {
  return [resolve(config.workDir, config.settings.Servers.InstanceRoot), config.workDir];
}

export interface FolderLock {
  /** `abstract-socket` on Linux; `none` where the platform has no such lock (then nothing stops a second daemon). */
  readonly mechanism: 'abstract-socket' | 'none';
  /** Why nothing is locked, for the caller's warning. */
  readonly unavailable?: string;
  /** Where this daemon listens, for the message a second one prints. */
  announce(urls: string[]): void;
  /** Also holds the inode names of locked folders made since the lock was taken (a first start creates the root). */
  refresh(): Promise<void>;
  release(): Promise<void>;
}

/**
 * Takes every folder's lock, or none, as Linux abstract Unix socket names: binding is atomic and the kernel frees a
 * name however the process ends, so no lock goes stale. Throws FolderLockedError when another process holds one.
 */
export async function lockFolders(
  folders: string[],
  opts: { command: string; platform?: NodeJS.Platform; answerTimeoutMs?: number },
): Promise<FolderLock> {
  const info: LockHolder = { pid: process.pid, urls: [], command: opts.command };
  const announce = (urls: string[]) => {
    info.urls = [...urls];
  };
  const unlocked = (unavailable: string): FolderLock => ({
    mechanism: 'none',
    unavailable,
    announce,
    refresh: async () => {},
    release: async () => {},
  });
  const platform = opts.platform ?? process.platform;
  if (platform !== 'linux') return unlocked(`${platform} has no abstract Unix sockets`);
  const servers: Server[] = [];
  const held = new Set<string>();
  const take = async (folder: string, name: string): Promise<void> => {
    if (held.has(name)) return;
    // A holder that ended between our bind and our question freed the name: bind again (bounded).
    for (let attempt = 0; attempt < 3; attempt++) {
      const bound = await bindName(name, info);
      if (bound.ok) {
        servers.push(bound.server);
        held.add(name);
        return;
      }
      if (bound.code !== undefined && UNAVAILABLE.has(bound.code)) throw new LockUnavailable(bound.error);
      if (bound.code !== 'EADDRINUSE')
        throw new Error(`cannot lock ${folder} against a second watchdog: ${bound.error.message}`, {
          cause: bound.error,
        });
      const holder = await askHolder(name, opts.answerTimeoutMs ?? 1000);
      if (holder !== 'gone') throw new FolderLockedError(folder, holder);
    }
    throw new FolderLockedError(folder, { pid: null, urls: [], command: 'start' });
  };
  try {
    for (const f of folders) for (const name of await lockNames(f)) await take(f, name);
  } catch (err) {
    await Promise.all(servers.map(closeServer));
    // A sandbox that forbids such sockets: run without the lock rather than not at all, and say so.
    if (err instanceof LockUnavailable) return unlocked(`abstract Unix sockets are refused here (${err.message})`);
    throw err;
  }
  return {
    mechanism: 'abstract-socket',
    announce,
    refresh: async () => {
      for (const f of folders) {
        const name = await inodeLockName(f);
        if (name !== null) await take(f, name);
      }
    },
    release: async () => {
      await Promise.all(servers.splice(0).map(closeServer));
      held.clear();
    },
  };
}

/** What a bind answers where abstract sockets exist but may not be used (seccomp, some sandboxes). */
const UNAVAILABLE = new Set(['EPERM', 'EACCES', 'EAFNOSUPPORT', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

class LockUnavailable extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}

function bindName(
  name: string,
  info: LockHolder,
): Promise<{ ok: true; server: Server } | { ok: false; code: string | undefined; error: Error }> {
  return new Promise((resolve) => {
    const server = createServer((sock) => {
      sock.on('error', () => {});
      sock.end(`${JSON.stringify(info)}\n`);
    });
    server.once('error', (error: NodeJS.ErrnoException) => resolve({ ok: false, code: error.code, error }));
    server.listen({ path: name, exclusive: true }, () => {
      // Later errors (a client that resets) must not end the daemon; the lock stays held while the socket does.
      server.on('error', () => {});
      // The lock never keeps the process alive on its own.
      server.unref();
      resolve({ ok: true, server });
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A folder's names: its canonical path (two spellings meet) and, when it exists, its inode (a bind mount meets). */
export async function lockNames(folder: string): Promise<string[]> {
  const inode = await inodeLockName(folder);
  return [abstractName(`path:${await canonicalPath(folder)}`), ...(inode === null ? [] : [inode])];
}

export async function inodeLockName(folder: string): Promise<string | null> {
  const id = await inodeOf(folder);
  return id === null ? null : abstractName(`inode:${id}`);
}

// Abstract names are at most 107 bytes; a hash keeps any path within that.
function abstractName(id: string): string {
  return `\0game-server-watchdog/lock/${createHash('sha256').update(id).digest('hex').slice(0, 40)}`;
}

/** Device, inode and birth time (which tells a reused inode from the removed folder's; 0 where none is kept). */
async function inodeOf(folder: string): Promise<string | null> {
  try {
    const s = await stat(folder, { bigint: true });
    if (!s.isDirectory()) return null;
    return s.birthtimeNs === 0n ? `${s.dev}:${s.ino}` : `${s.dev}:${s.ino}:${s.birthtimeNs}`;
  } catch {
    return null;
  }
}

/** `folder` with symlinks resolved, without creating anything: the missing rest is appended as written. */
export async function canonicalPath(folder: string): Promise<string> {
  const abs = resolve(folder);
  const missing: string[] = [];
  let at = abs;
  for (let i = 0; i < 4096; i++) {
    try {
      return join(await realpath(at), ...missing);
    } catch {
      const up = dirname(at);
      if (up === at) break;
      missing.unshift(basename(at));
      at = up;
    }
  }
  return abs;
}

export interface LockHolder {
  pid: number | null;
  /** Empty while it is still starting, and for `watchdog import`. */
  urls: string[];
  /** `start` or `import`. */
  command: string;
}

/** Nothing was touched; the message says who holds the folder, where, and what to do. */
export class FolderLockedError extends Error {
  override name = 'FolderLockedError';
  constructor(
    readonly folder: string,
    readonly holder: LockHolder,
    options?: ErrorOptions,
  ) {
    super(describeHolder(folder, holder), options);
  }
}

export function describeHolder(folder: string, h: LockHolder): string {
  const who = h.pid === null ? 'pid unknown: it did not answer' : `pid ${h.pid}`;
  const doing =
    h.command === 'import'
      ? 'running `watchdog import`'
      : h.urls.length > 0
        ? `listening on ${h.urls.join(' and ')}`
        : 'still starting';
  return (
    `another watchdog (${who}, ${doing}) is running in ${folder}; ` +
    'stop it first, or give this one another working folder and Servers.InstanceRoot'
  );
}

/** The holder's answer; `gone` when nobody holds the name any more. */
export function askHolder(name: string, timeoutMs: number): Promise<LockHolder | 'gone'> {
  return new Promise((resolve) => {
    let text = '';
    const unknown: LockHolder = { pid: null, urls: [], command: 'start' };
    const sock = createConnection({ path: name });
    const timer = setTimeout(() => finish(unknown), timeoutMs);
    const finish = (result: LockHolder | 'gone') => {
      clearTimeout(timer);
      sock.destroy();
      resolve(result);
    };
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      text += d;
      if (text.length > 4096) finish(unknown);
    });
    sock.on('end', () => finish(parseHolder(text) ?? unknown));
    sock.on('error', (err: NodeJS.ErrnoException) =>
      finish(err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? 'gone' : unknown),
    );
  });
}

function parseHolder(text: string): LockHolder | null {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null) return null;
    const o = v as Record<string, unknown>;
    const pid = typeof o.pid === 'number' && Number.isInteger(o.pid) ? o.pid : null;
    const urls = Array.isArray(o.urls)
      ? o.urls
          .filter((u): u is string => typeof u === 'string')
          .slice(0, 8)
          .map(printable)
      : [];
    const command = typeof o.command === 'string' ? printable(o.command) : 'start';
    return { pid, urls, command };
  } catch {
    return null;
  }
}

/** Anyone on the machine can answer on an abstract name: what it says is shown without control characters. */
function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this replaces
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?').slice(0, 200);
}
