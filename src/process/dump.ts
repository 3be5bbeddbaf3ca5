import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import type { Logger } from '../log.ts';

export type DumpType = 'Normal' | 'WithHeap' | 'Triage' | 'Full';

export interface DumpOptions {
  /** `<instance>/dumps`. */
  dumpsDir: string;
  /** `TimeoutDumpType`; only createdump distinguishes them (gcore always writes a full core). */
  type: DumpType;
  /** The dumper is killed after this long (Timing.DumpTimeoutSeconds). */
  timeoutMs: number;
  /** The server's program: a self-contained .NET build ships `createdump` beside it. */
  program: string;
  log: Logger;
  /** Where to look for dumpers; defaults to PATH. */
  searchPath?: string;
  /** Dumps kept in dumpsDir, newest first (default 3). */
  keep?: number;
  /** Total size of the dumps kept (default `DUMPS_MAX_BYTES`); the newest dump is kept whatever its size. */
  maxBytes?: number;
}

/** The dumps of one instance are bounded by count and by total size. */
export const DUMPS_KEEP = 3;
export const DUMPS_MAX_BYTES = 4 * 1024 ** 3;

/** createdump's flag per dump type (dotnet/runtime `src/coreclr/debug/createdump/main.cpp`). */
const CREATEDUMP_FLAGS: Record<DumpType, string> = {
  Normal: '--normal',
  WithHeap: '--withheap',
  Triage: '--triage',
  Full: '--full',
};

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function findOnPath(name: string, searchPath: string): Promise<string | null> {
  for (const dir of searchPath.split(delimiter)) {
    if (dir && (await executable(join(dir, name)))) return join(dir, name);
  }
  return null;
}

/** `dump_yyyy-MM-dd_HH-mm-ss` in UTC, as the real watchdog names them (its `ServerInstance.cs`). */
function dumpName(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `dump_${now.getUTCFullYear()}-${p(now.getUTCMonth() + 1)}-${p(now.getUTCDate())}_${p(now.getUTCHours())}-${p(now.getUTCMinutes())}-${p(now.getUTCSeconds())}`;
}

/**
 * Runs the dumper in its own process group; resolves its exit code, or null when it could not start or was killed
 * at the deadline. The deadline kills the whole group: gdb's `gcore` is a shell script that forks gdb rather than
 * exec'ing it, and a gdb left running kept the stderr pipe open, so the hang kill waited for the dump anyway.
 */
function runBounded(program: string, args: string[], timeoutMs: number, log: Logger): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    let stderr = '';
    let killed = false;
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString('utf8');
    });
    const timer = setTimeout(() => {
      log.warn('dumper took too long; killed it', { program, timeoutMs });
      killed = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL'); // the group is gone already; the dumper itself may not be
      }
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      log.warn('could not run the dumper', { program, error: err.message });
      resolve(null);
    });
    // A killed dumper is done at its exit, whoever else still holds its pipe; a finished one once its stderr is read.
    child.once('exit', () => {
      if (!killed) return;
      child.stderr?.destroy();
      resolve(null);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0 && stderr && !killed) log.warn('dumper failed', { program, code, signal, stderr: stderr.trim() });
      resolve(signal || killed ? null : code);
    });
  });
}

/**
 * Keeps the newest `keep` entries named dump_* (files or gcore's `<name>.<pid>`), and of those only as many as fit
 * in `maxBytes` together, newest first; the newest is kept whatever its size (it is the one just taken).
 */
export async function pruneDumps(dumpsDir: string, keep: number, maxBytes = DUMPS_MAX_BYTES): Promise<void> {
  const names = (await readdir(dumpsDir).catch(() => [] as string[])).filter((n) => n.startsWith('dump_'));
  const dated = await Promise.all(
    names.map(async (n) => {
      const st = await stat(join(dumpsDir, n)).catch(() => null);
      return { n, t: st?.mtimeMs ?? 0, size: st?.size ?? 0 };
    }),
  );
  dated.sort((a, b) => b.t - a.t || b.n.localeCompare(a.n));
  let total = 0;
  const doomed = dated.filter((d, i) => {
    total += d.size;
    return i >= keep || (i > 0 && total > maxBytes);
  });
  await Promise.all(doomed.map(({ n }) => rm(join(dumpsDir, n), { force: true, recursive: true })));
}

/**
 * Dumps a hung server before it is killed (`DumpOnTimeout`): `createdump` beside the program or on PATH
 * (the .NET runtime's dumper, honouring the dump type), else `gcore` from gdb, else just a log line.
 * Bounded by `timeoutMs`; keeps the newest 3 dumps, at most 4 GiB together (`keep`, `maxBytes`). Resolves the dump's path, or null. Never rejects.
 */
export async function dumpProcess(pid: number, opts: DumpOptions): Promise<string | null> {
  const searchPath = opts.searchPath ?? process.env.PATH ?? '';
  try {
    // A dump holds the server's memory (tokens, players' data): the folder and each dump are the daemon user's only,
    // like data.json. The dumper writes with its own mode (gcore's follows the umask), so the folder closes the gap.
    await mkdir(opts.dumpsDir, { recursive: true, mode: 0o700 });
    await chmod(opts.dumpsDir, 0o700);
    const base = join(opts.dumpsDir, dumpName());
    const createdump = (await executable(join(dirname(opts.program), 'createdump')))
      ? join(dirname(opts.program), 'createdump')
      : await findOnPath('createdump', searchPath);
    let written: string | null = null;
    if (createdump) {
      const code = await runBounded(
        createdump,
        [CREATEDUMP_FLAGS[opts.type], '-f', base, String(pid)],
        opts.timeoutMs,
        opts.log,
      );
      if (code === 0) written = base;
    } else {
      const gcore = await findOnPath('gcore', searchPath);
      if (!gcore) {
        opts.log.warn('no dumper found (createdump beside the server or on PATH, or gcore from gdb); no dump taken', {
          pid,
        });
        return null;
      }
      // gcore appends the pid: <base>.<pid>
      const code = await runBounded(gcore, ['-o', base, String(pid)], opts.timeoutMs, opts.log);
      if (code === 0) written = `${base}.${pid}`;
    }
    if (written && !(await stat(written).catch(() => null))) written = null;
    if (written) {
      await chmod(written, 0o600);
      opts.log.info('dump written', { pid, file: written });
    } else await Promise.all([base, `${base}.${pid}`].map((f) => rm(f, { force: true }))); // half-written by a killed dumper
    await pruneDumps(opts.dumpsDir, opts.keep ?? DUMPS_KEEP, opts.maxBytes);
    return written;
  } catch (err) {
    opts.log.warn('dump failed', { pid, error: err instanceof Error ? err.message : String(err) });
    return null;
  }
}
