/**
 * What /proc says about a process that may be a .NET server: its diagnostics IPC socket, the runtime it loaded (and
 * so that runtime's `createdump`), and whether it is stopped.
 */
import { constants } from 'node:fs';
import { access, readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { environVar, statFields } from './proc-info.ts';

/** Field 3 of /proc/<pid>/stat (R, S, D, T for stopped by a signal, t for stopped by a tracer, Z…), or null. */
export async function processState(pid: number): Promise<string | null> {
  try {
    return statFields(await readFile(`/proc/${pid}/stat`, 'utf8'))[0] ?? null;
  } catch {
    return null;
  }
}

/** The pid as the process itself sees it (the last of NSpid in /proc/<pid>/status): it names its socket with it. */
async function pidInItsNamespace(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const ns = /^NSpid:\s*(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/).at(-1);
  return ns && /^\d+$/.test(ns) ? Number(ns) : pid;
}

async function isSocket(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isSocket() ?? false;
}

/**
 * The runtime's diagnostics socket, `dotnet-diagnostic-<pid>-<start jiffies>-socket` in the process's `$TMPDIR`,
 * through /proc/<pid>/root first (a private /tmp); else the newest socket of that pid, as the client library does.
 */
export async function findDiagnosticsSocket(pid: number): Promise<string | null> {
  const tmp = (await environVar(pid, 'TMPDIR')) || '/tmp';
  const nspid = await pidInItsNamespace(pid);
  const startTime = (await readFile(`/proc/${pid}/stat`, 'utf8').then(statFields, () => []))[19];
  const prefix = `dotnet-diagnostic-${nspid}-`;
  for (const dir of [join(`/proc/${pid}/root`, tmp), tmp]) {
    const exact = join(dir, `${prefix}${startTime}-socket`);
    if (startTime && (await isSocket(exact))) return exact;
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
export async function loadedCoreclr(pid: number): Promise<string | null> {
  const maps = await readFile(`/proc/${pid}/maps`, 'utf8').catch(() => '');
  for (const line of maps.split('\n')) {
    const path = line.slice(line.indexOf('/'));
    if (line.includes('/') && path.endsWith('/libcoreclr.so')) return path;
  }
  return null;
}

export async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** The `createdump` beside the `libcoreclr.so` the process runs on (in our view, then through /proc/<pid>/root). */
export async function runtimeCreatedump(pid: number): Promise<string | null> {
  const coreclr = await loadedCoreclr(pid);
  if (!coreclr) return null;
  for (const candidate of [
    join(dirname(coreclr), 'createdump'),
    join(`/proc/${pid}/root`, dirname(coreclr), 'createdump'),
  ]) {
    if (await executable(candidate)) return candidate;
  }
  return null;
}
