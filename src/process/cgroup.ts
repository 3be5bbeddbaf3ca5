import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { monotonicMs } from '../clock.ts';
import { makeDir } from '../make-dir.ts';
import { killPid, killUntilGone } from './process-group.ts';

/**
 * cgroup v2 plumbing for process tracking: one cgroup per launch, below a folder of this daemon's in its own cgroup.
 * A process cannot leave a cgroup by changing its session or group, so killing the cgroup takes every process
 * a launch created (systemd's KillMode=control-group, done by us).
 */

/** Where the cgroup2 file system is mounted (`/sys/fs/cgroup`, `…/unified` on hybrid hosts). */
export async function cgroup2Mount(): Promise<string | null> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    // `<id> <parent> <dev> <root> <mount point> <options> [optional…] - <fstype> <source> <super options>`
    const [before, after] = line.split(' - ');
    if (after?.split(' ')[0] === 'cgroup2') return before?.split(' ')[4] ?? null;
  }
  return null;
}

/** This process's cgroup v2 folder on its mount, or why it has none. */
export async function ownCgroup(): Promise<{ mount: string; own: string } | { why: string }> {
  if (process.platform !== 'linux') return { why: `not Linux (${process.platform})` };
  const mount = await cgroup2Mount();
  if (mount === null) return { why: 'no cgroup2 file system is mounted (cgroup v1 only)' };
  const own = await cgroupOf('self', mount);
  return own === null ? { why: 'this process has no cgroup v2 path in /proc/self/cgroup' } : { mount, own };
}

/** The cgroup folder `pid` is in, on `mount` (with none, the path in the hierarchy); null without cgroup v2. */
export async function cgroupOf(pid: number | 'self', mount = ''): Promise<string | null> {
  const text = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '');
  const line = text.split('\n').find((l) => l.startsWith('0::'));
  return line ? join(mount, line.slice(3)) : null;
}

export async function cgroupPids(dir: string): Promise<number[]> {
  const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => /^\d+$/.test(l))
    .map(Number);
}

/**
 * The shell line that moves itself into a cgroup (`$1`: its `cgroup.procs`) and then execs the server: it is in the
 * cgroup before it runs a single instruction, so nothing it forks can escape.
 */
export const JOIN_AND_EXEC =
  'echo $$ > "$1" || { echo "watchdog: cannot move the server into its cgroup ($1)" >&2; exit 125; }; shift; exec "$@"';

export function inCgroup(dir: string, program: string, args: string[]): { file: string; args: string[] } {
  return { file: '/bin/sh', args: ['-c', JOIN_AND_EXEC, 'sh', join(dir, 'cgroup.procs'), program, ...args] };
}

/** Whether this daemon can run launches in cgroups below `base`, tried as a launch does: null, or why not. */
export async function probeCgroups(base: string): Promise<string | null> {
  const dir = join(base, `probe-${process.pid}`);
  try {
    await makeDir(dir);
  } catch (err) {
    return `cannot create ${base}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
  try {
    const { file, args } = inCgroup(dir, '/bin/sh', ['-c', 'exit 0']);
    const outcome = await new Promise<number | string | null>((resolve) => {
      const child = spawn(file, args, { stdio: 'ignore' });
      child.once('error', (err: NodeJS.ErrnoException) => resolve(`cannot run ${file}: ${err.code ?? err.message}`));
      child.once('exit', (c) => resolve(c));
    });
    if (typeof outcome === 'string') return outcome;
    return outcome === 0 ? null : `cannot move a process into ${dir} (exit ${outcome})`;
  } finally {
    await removeWhenEmpty(dir, 1000);
  }
}

/** Kills every process in `dir` and below: `cgroup.kill` (kernel 5.14+), else SIGKILL to each; the pids there. */
export async function killCgroup(dir: string): Promise<number[]> {
  const pids = await treePids(dir);
  if (existsSync(join(dir, 'cgroup.kill'))) {
    await writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined);
  } else pids.forEach(killPid);
  return pids;
}

async function treePids(dir: string): Promise<number[]> {
  const pids = await cgroupPids(dir);
  for (const child of await subgroups(dir)) pids.push(...(await treePids(child)));
  return pids;
}

/** The synchronous form, for an actor's cleanup. */
export function killCgroupNow(dir: string): void {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
  } catch {
    // No cgroup.kill (older kernel) or gone: the async killCgroup at the exit takes care of it.
  }
}

/**
 * Kills what is left in `dir` until it is empty, then removes it; the pids killed. A cgroup that cannot be emptied
 * within `timeoutMs` stays, and the next sweep tries again. Never throws.
 */
export async function killAndRemove(dir: string, timeoutMs: number): Promise<number[]> {
  if (!existsSync(dir)) return [];
  const deadline = monotonicMs() + timeoutMs;
  const killed = await killUntilGone(() => killCgroup(dir), timeoutMs);
  await removeTree(dir, deadline);
  return killed;
}

/** Removes the empty cgroups of `dir`'s tree, deepest first, retrying EBUSY until `deadline` (monotonic, or none). */
export async function removeTree(dir: string, deadline = 0): Promise<void> {
  for (const child of await subgroups(dir)) await removeTree(child, deadline);
  await removeWhenEmpty(dir, Math.max(0, deadline - monotonicMs()));
}

export async function subgroups(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => join(dir, e.name));
}

/** Removes an emptied cgroup, retrying EBUSY (its last processes not reaped yet) for `timeoutMs`; whether it is gone. */
async function removeWhenEmpty(dir: string, timeoutMs: number): Promise<boolean> {
  const deadline = monotonicMs() + timeoutMs;
  for (;;) {
    try {
      await rmdir(dir);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return true;
      if (code !== 'EBUSY' || monotonicMs() >= deadline) return false;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
