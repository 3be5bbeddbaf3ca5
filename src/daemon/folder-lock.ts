import { createServer, type Server } from 'node:net';
import { resolve } from 'node:path';
import type { ResolvedConfig } from '../config/resolved.ts';
import { askHolder, FolderLockedError, type LockHolder } from './folder-lock-holder.ts';
import { inodeLockName, lockNames } from './folder-lock-names.ts';

export { describeHolder, FolderLockedError, type LockHolder } from './folder-lock-holder.ts';

/** What one watchdog owns alone: its instance root, and its working folder (logs/, the audit log). */
export function ownedFolders(config: ResolvedConfig): string[] {
  return [resolve(config.workDir, config.settings.Servers.InstanceRoot), config.workDir];
}

export interface FolderLock {
  /** `abstract-socket` on Linux; `none` where the platform has no such lock (then nothing stops a second daemon). */
  readonly mechanism: 'abstract-socket' | 'none';
  /** Why nothing is locked (mechanism `none`), for the warning the caller logs. */
  readonly unavailable?: string;
  /** Where this daemon listens, for the message a second one prints. */
  announce(urls: string[]): void;
  /** Also holds the inode names of locked folders made since the lock was taken (a first start creates the root). */
  refresh(): Promise<void>;
  release(): Promise<void>;
}

export interface LockOptions {
  command: string;
  platform?: NodeJS.Platform;
  /** How long to wait for the holder to say who it is (default 1 s). */
  answerTimeoutMs?: number;
}

/**
 * Takes every folder's lock, or none: on Linux each folder's names (folder-lock-names.ts) are bound as abstract Unix
 * sockets. Binding is atomic, so of two daemons started at once exactly one gets a name; the kernel frees it when
 * the process ends however it ends (SIGKILL included), so a stale lock cannot exist. The holder answers a connection
 * with its pid and URLs. Throws FolderLockedError when another process holds one; takes nothing then.
 */
export async function lockFolders(folders: string[], opts: LockOptions): Promise<FolderLock> {
  const info: LockHolder = { pid: process.pid, urls: [], command: opts.command };
  const platform = opts.platform ?? process.platform;
  if (platform !== 'linux') return unlocked(info, `${platform} has no abstract Unix sockets`);
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
    if (err instanceof LockUnavailable)
      return unlocked(info, `abstract Unix sockets are refused here (${err.message})`);
    throw err;
  }
  return {
    mechanism: 'abstract-socket',
    announce: (urls) => {
      info.urls = [...urls];
    },
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

function unlocked(info: LockHolder, unavailable: string): FolderLock {
  return {
    mechanism: 'none',
    unavailable,
    announce: (urls) => {
      info.urls = [...urls];
    },
    refresh: async () => {},
    release: async () => {},
  };
}

type Bound = { ok: true; server: Server } | { ok: false; code: string | undefined; error: Error };

function bindName(name: string, info: LockHolder): Promise<Bound> {
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
