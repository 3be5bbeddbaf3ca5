import { chmod, readdir, readFile, rm, stat } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { monotonicMs } from '../clock.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { makeDir } from '../make-dir.ts';
import { expired, type RetentionRule } from '../store/retention.ts';
import { type DumpType, requestDump } from './dotnet-diagnostics.ts';
import { environVar, statFields } from './proc-info.ts';
import { runChild } from './run-child.ts';
import { execError } from './start-child.ts';

export interface DumpOptions {
  dumpsDir: string;
  /** `TimeoutDumpType` (gcore always writes a full core). */
  type: DumpType;
  /** All the dumpers tried share this bound; one still running at it is killed. */
  timeoutMs: number;
  /** The server's program: a self-contained .NET build ships `createdump` beside it. */
  program: string;
  log: Logger;
  /** Defaults to PATH. */
  searchPath?: string;
  /** `Retention.Dumps`; the newest is kept whatever its size. */
  retention?: RetentionRule;
}

/** The defaults of `Retention.Dumps`. */
export const DUMPS_RETENTION: RetentionRule = { keep: 3, keepDays: 0, maxBytes: 4_000_000_000 };

/** The first of `candidates` that can be executed, or null. */
async function firstExecutable(candidates: string[]): Promise<string | null> {
  for (const path of candidates) if ((await execError(path)) === null) return path;
  return null;
}

const onPath = (name: string, searchPath: string) =>
  searchPath.split(delimiter).flatMap((dir) => (dir ? [join(dir, name)] : []));

/** `dump_yyyy-MM-dd_HH-mm-ss` in UTC, as the real watchdog names them (its `ServerInstance.cs`). */
const dumpName = () => `dump_${new Date().toISOString().slice(0, 19).replace('T', '_').replace(/:/g, '-')}`;

/**
 * Runs a dumper; its exit code, or null when it could not start or was stopped at the deadline with its whole group
 * (gcore is a shell script that forks gdb, and a gdb left running would hold up the hang kill).
 */
async function runBounded(program: string, args: string[], timeoutMs: number, log: Logger): Promise<number | null> {
  const never = new AbortController().signal;
  try {
    const r = await runChild(program, args, {
      cwd: process.cwd(),
      env: process.env,
      signal: never,
      timeoutMs,
      what: 'the dumper',
    });
    if (r.code !== 0 && r.tail) log.warn('dumper failed', { program, code: r.code, signal: r.signal, output: r.tail });
    return r.signal ? null : r.code;
  } catch (err) {
    if (err instanceof Error && 'timedOut' in err) log.warn('dumper took too long; killed it', { program, timeoutMs });
    else log.warn('could not run the dumper', { program, error: describeError(err) });
    return null;
  }
}

/** Applies the retention rule to the dump_* entries (files, or gcore's `<name>.<pid>`), by modification time. */
async function pruneDumps(dumpsDir: string, rule: RetentionRule): Promise<void> {
  const names = (await readdir(dumpsDir).catch(() => [] as string[])).filter((n) => n.startsWith('dump_'));
  const dated = await Promise.all(
    names.map(async (id) => {
      const st = await stat(join(dumpsDir, id)).catch(() => null);
      return { id, at: st?.mtimeMs ?? 0, bytes: st?.size ?? 0 };
    }),
  );
  const doomed = expired(dated, rule, Date.now());
  await Promise.all(doomed.map(({ id }) => rm(join(dumpsDir, id), { force: true, recursive: true })));
}

const exists = async (file: string) => (await stat(file).catch(() => null))?.isFile() ?? false;

/**
 * Dumps a hung server before it is killed (`DumpOnTimeout`), the first way that works within `timeoutMs`: the runtime
 * over its diagnostics socket (as the real watchdog's `WriteDump`), `createdump`, then gdb's `gcore` (a full core of
 * GBs, so last). Applies `Retention.Dumps`. Resolves the dump's path or null; never rejects.
 */
export async function dumpProcess(pid: number, opts: DumpOptions): Promise<string | null> {
  const searchPath = opts.searchPath ?? process.env.PATH ?? '';
  const deadline = monotonicMs() + opts.timeoutMs;
  const left = () => Math.max(0, deadline - monotonicMs());
  const { log } = opts;
  try {
    // A dump holds the server's memory (tokens, players' data): the folder and each dump are the daemon user's only,
    // like data.json. The dumper writes with its own mode (gcore's follows the umask), so the folder closes the gap.
    await makeDir(opts.dumpsDir, 0o700);
    await chmod(opts.dumpsDir, 0o700);
    const base = join(opts.dumpsDir, dumpName());
    const failed: string[] = [];
    let written: { file: string; method: 'diagnostics-ipc' | 'createdump' | 'gcore' } | null = null;

    const socket = await findDiagnosticsSocket(pid);
    if (socket) {
      // A stopped process (state T) cannot answer its socket. It is about to be killed: resumed, what hung is still
      // stuck where it was, and the runtime's own dump needs no ptrace privilege from us (a createdump or gcore of
      // ours is refused under Yama ptrace_scope=1 without CAP_SYS_PTRACE).
      if ((await processState(pid)) === 'T') {
        try {
          process.kill(pid, 'SIGCONT');
          log.info('the hung server was stopped; resumed it (SIGCONT) so its runtime can write the dump', { pid });
        } catch {
          // Gone already: the request below fails and says so.
        }
      }
      const r = await requestDump(socket, base, opts.type, left());
      if (r.ok && (await exists(base))) written = { file: base, method: 'diagnostics-ipc' };
      else failed.push(`diagnostics IPC: ${r.ok ? `the runtime reported success but wrote no ${base}` : r.reason}`);
    }
    const coreclr = await loadedCoreclr(pid);
    const dotnet = socket !== null || coreclr !== null;

    if (!written && left() > 0) {
      // The loaded runtime's (in our view, then through /proc/<pid>/root), beside the program, or on PATH.
      const createdump = await firstExecutable([
        ...(coreclr
          ? [join(dirname(coreclr), 'createdump'), join(`/proc/${pid}/root`, dirname(coreclr), 'createdump')]
          : []),
        join(dirname(opts.program), 'createdump'),
        ...onPath('createdump', searchPath),
      ]);
      if (createdump) {
        // Its flag is the type's name (dotnet/runtime `src/coreclr/debug/createdump/main.cpp`): --normal, --withheap…
        const code = await runBounded(
          createdump,
          [`--${opts.type.toLowerCase()}`, '-f', base, String(pid)],
          left(),
          log,
        );
        if (code === 0 && (await exists(base))) written = { file: base, method: 'createdump' };
        else failed.push(`createdump (${createdump}): ${code === null ? 'killed or did not start' : `exit ${code}`}`);
      }
    }

    if (!written && left() > 0) {
      const gcore = await firstExecutable(onPath('gcore', searchPath));
      if (gcore) {
        if (dotnet)
          log.warn('the .NET dumpers failed; falling back to gcore, which writes a full core (GBs)', { pid, failed });
        // gcore appends the pid: <base>.<pid>
        const code = await runBounded(gcore, ['-o', base, String(pid)], left(), log);
        if (code === 0 && (await exists(`${base}.${pid}`))) written = { file: `${base}.${pid}`, method: 'gcore' };
        else failed.push(`gcore: ${code === null ? 'killed or did not start' : `exit ${code}`}`);
      } else if (!dotnet || failed.length === 0) failed.push('no dumper found (createdump, or gcore from gdb)');
    }

    if (written) {
      await chmod(written.file, 0o600);
      const bytes = (await stat(written.file)).size;
      log.info('dump written', { pid, file: written.file, method: written.method, type: opts.type, bytes });
      if (failed.length > 0) log.info('dumpers tried before it', { pid, failed });
    } else {
      if (left() === 0) failed.push(`out of time (${opts.timeoutMs} ms)`);
      log.warn('no dump taken', { pid, failed });
      await Promise.all([base, `${base}.${pid}`].map((f) => rm(f, { force: true }))); // half-written by a killed dumper
    }
    await pruneDumps(opts.dumpsDir, opts.retention ?? DUMPS_RETENTION);
    return written?.file ?? null;
  } catch (err) {
    log.warn('dump failed', { pid, error: err instanceof Error ? err.message : String(err) });
    return null;
  }
}

// What /proc says about a process that may be a .NET server: its diagnostics socket, its runtime, its state.

/** Field 3 of /proc/<pid>/stat (R, S, D, T for stopped by a signal, t for stopped by a tracer, Z…), or null. */
export async function processState(pid: number): Promise<string | null> {
  try {
    return statFields(await readFile(`/proc/${pid}/stat`, 'utf8'))[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * The runtime's diagnostics socket, `dotnet-diagnostic-<pid>-<start jiffies>-socket` in the process's `$TMPDIR`,
 * through /proc/<pid>/root first (a private /tmp); else the newest socket of that pid, as the client library does.
 */
export async function findDiagnosticsSocket(pid: number): Promise<string | null> {
  const tmp = (await environVar(pid, 'TMPDIR')) || '/tmp';
  // The pid as the process itself sees it (the last of NSpid in /proc/<pid>/status): it names its socket with it.
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const ns = /^NSpid:\s*(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/).at(-1);
  const nspid = ns && /^\d+$/.test(ns) ? Number(ns) : pid;
  const startTime = (await readFile(`/proc/${pid}/stat`, 'utf8').then(statFields, () => []))[19];
  const prefix = `dotnet-diagnostic-${nspid}-`;
  for (const dir of [join(`/proc/${pid}/root`, tmp), tmp]) {
    const exact = join(dir, `${prefix}${startTime}-socket`);
    if (startTime && (await stat(exact).catch(() => null))?.isSocket()) return exact;
    const names = (await readdir(dir).catch(() => [] as string[])).filter(
      (n) => n.startsWith(prefix) && n.endsWith('-socket'),
    );
    const dated = await Promise.all(
      names.map(async (n) => ({ path: join(dir, n), st: await stat(join(dir, n)).catch(() => null) })),
    );
    const newest = dated.filter((d) => d.st?.isSocket()).sort((a, b) => (b.st?.mtimeMs ?? 0) - (a.st?.mtimeMs ?? 0));
    if (newest[0]) return newest[0].path;
  }
  return null;
}

/** The `libcoreclr.so` the process has mapped (as its own mount namespace names it), or null: not .NET, or single-file. */
async function loadedCoreclr(pid: number): Promise<string | null> {
  const maps = await readFile(`/proc/${pid}/maps`, 'utf8').catch(() => '');
  for (const line of maps.split('\n')) {
    const path = line.slice(line.indexOf('/'));
    if (line.includes('/') && path.endsWith('/libcoreclr.so')) return path;
  }
  return null;
}
