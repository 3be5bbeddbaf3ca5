import { readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { makeDir } from '../make-dir.ts';
import { ownCgroup } from './cgroup.ts';

/** The config's `Limits`, converted: the hard limits of a launch in its cgroup v2. */
export interface HardLimits {
  /** Decimal MB (1 MB = 1,000,000 bytes), as every size the daemon reads or prints. */
  memoryMB?: number;
  /** Percent of one core: 100 is one core. */
  cpuPercent?: number;
  tasks?: number;
}

export type LimitController = 'memory' | 'cpu' | 'pids';

/** The CPU period the quota is a share of: the kernel's default. */
export const CPU_PERIOD_US = 100_000;

export function limitFiles(limits: HardLimits) {
  const out: { controller: LimitController; file: string; text: string; key: string }[] = [];
  if (limits.memoryMB !== undefined)
    out.push({ controller: 'memory', file: 'memory.max', text: memoryMaxText(limits.memoryMB), key: 'MemoryMB' });
  if (limits.cpuPercent !== undefined)
    out.push({ controller: 'cpu', file: 'cpu.max', text: cpuMaxText(limits.cpuPercent), key: 'CpuPercent' });
  if (limits.tasks !== undefined)
    out.push({ controller: 'pids', file: 'pids.max', text: String(limits.tasks), key: 'Tasks' });
  return out;
}

/** `memory.max` for `mb` decimal megabytes: whole bytes (the kernel rounds them down to its page size). */
export const memoryMaxText = (mb: number): string => String(Math.floor(mb * 1_000_000));

/** `cpu.max` for `percent` of one core: `cpuMaxText(150)` is `150000 100000` (the quota at least 1 ms). */
export const cpuMaxText = (percent: number): string =>
  `${Math.max(1000, Math.round((percent / 100) * CPU_PERIOD_US))} ${CPU_PERIOD_US}`;

/** In the order the kernel lists them. */
export const neededControllers = (limits: HardLimits): LimitController[] =>
  (['cpu', 'memory', 'pids'] as const).filter((c) => limitFiles(limits).some((f) => f.controller === c));

/** The `oom_kill` count of a `memory.events` text (0 when it has none). */
export function oomKills(memoryEvents: string): number {
  const line = memoryEvents.split('\n').find((l) => l.startsWith('oom_kill '));
  const n = Number(line?.slice('oom_kill '.length));
  return Number.isInteger(n) && n > 0 ? n : 0;
}

export async function readOomKills(dir: string): Promise<number> {
  return oomKills(await readFile(join(dir, 'memory.events'), 'utf8').catch(() => ''));
}

/** The names a cgroup file lists (`cgroup.controllers`, `cgroup.subtree_control`); none when it cannot be read. */
const listed = async (file: string): Promise<Set<string>> =>
  new Set((await readFile(file, 'utf8').catch(() => '')).split(/\s+/).filter(Boolean));

function missingController(own: string, available: Set<string>): string {
  const has = available.size === 0 ? 'none' : [...available].join(' ');
  const dir = own.length > 1 ? own.replace(/\/$/, '') : own;
  return `the controller is not delegated to this daemon's cgroup ${dir} (its cgroup.controllers lists ${has})`;
}

/** One line per reason: `Limits.MemoryMB (memory.max) and Limits.Tasks (pids.max) cannot apply: <why>`. */
export function unappliedLines(limits: HardLimits, why: ReadonlyMap<string, string>): string[] {
  const byReason = new Map<string, string[]>();
  for (const f of limitFiles(limits)) {
    const reason = why.get(f.file) ?? why.get(f.controller);
    if (reason !== undefined) byReason.set(reason, [...(byReason.get(reason) ?? []), `Limits.${f.key} (${f.file})`]);
  }
  return [...byReason].map(([reason, keys]) => {
    const named = keys.length === 1 ? keys[0] : `${keys.slice(0, -1).join(', ')} and ${keys.at(-1)}`;
    return `${named} cannot apply: ${reason}`;
  });
}

/**
 * Enables `controllers` in each cgroup from `top` (the daemon's own) down to `parent`. A non-root cgroup that holds
 * processes cannot hand the memory controller down ("no internal processes"): the daemon moves itself to `leaf`
 * first. Returns, per controller that could not be enabled, why.
 */
export async function enableControllers(
  top: string,
  parent: string,
  controllers: readonly LimitController[],
  leaf: string,
): Promise<Map<LimitController, string>> {
  const why = new Map<LimitController, string>();
  const available = await listed(join(top, 'cgroup.controllers'));
  const wanted = controllers.filter((c) => {
    if (!available.has(c)) why.set(c, missingController(top, available));
    return available.has(c);
  });
  for (const level of chainDown(top, parent)) {
    const on = await listed(join(level, 'cgroup.subtree_control'));
    for (const c of wanted.filter((w) => !on.has(w) && !why.has(w))) {
      const problem = await enable(level, c, level === top ? leaf : null);
      if (problem !== null) why.set(c, problem);
    }
  }
  return why;
}

export function chainDown(top: string, parent: string): string[] {
  const below = relative(top, parent);
  if (below === '' || below.startsWith('..')) return [top];
  const parts = below.split('/');
  return [top, ...parts.map((_, i) => join(top, ...parts.slice(0, i + 1)))];
}

/** Writes `+controller` to `level`'s subtree_control; on EBUSY with `leaf`, moves this process there and tries again. */
async function enable(level: string, controller: LimitController, leaf: string | null): Promise<string | null> {
  const write = () => writeFile(join(level, 'cgroup.subtree_control'), `+${controller}`);
  try {
    await write();
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    if (code !== 'EBUSY' || leaf === null)
      return `cannot enable the ${controller} controller in ${join(level, 'cgroup.subtree_control')}: ${code}`;
  }
  try {
    await makeDir(leaf);
    await writeFile(join(leaf, 'cgroup.procs'), String(process.pid));
    await write();
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return `cannot enable the ${controller} controller below ${level}, which holds processes besides this daemon (${code}); cgroup v2 hands memory only to cgroups without processes of their own`;
  }
}

/**
 * Writes `limits` into the launch's cgroup, each file on its own (one that fails is said, the rest apply). At a memory
 * limit the launch is killed as a whole (`memory.oom.group`): a server that lost one process would run on broken.
 */
export async function writeLimits(
  dir: string,
  limits: HardLimits,
  skip: ReadonlyMap<LimitController, string>,
): Promise<{ problems: string[]; written: string[] }> {
  const why = new Map<string, string>(skip);
  const written: string[] = [];
  for (const f of limitFiles(limits)) {
    if (skip.has(f.controller)) continue;
    const failed = await writeFile(join(dir, f.file), f.text).then(
      () => null,
      (err: NodeJS.ErrnoException) => `cannot write ${f.text} to it: ${err.code ?? err.message}`,
    );
    if (failed !== null) why.set(f.file, failed);
    else written.push(f.file);
    if (f.controller === 'memory') await writeFile(join(dir, 'memory.oom.group'), '1').catch(() => undefined);
  }
  return { problems: unappliedLines(limits, why), written };
}

/** Why each of `controllers` cannot limit a daemon started from here, for `watchdog check` (reads only). */
export async function undelegated(controllers: readonly LimitController[]): Promise<Map<LimitController, string>> {
  const cg = await ownCgroup();
  if ('why' in cg) return new Map(controllers.map((c) => [c, cg.why]));
  const { own } = cg;
  const available = await listed(join(own, 'cgroup.controllers'));
  return new Map(
    controllers.filter((c) => !available.has(c)).map((c) => [c, missingController(own, available)] as const),
  );
}
