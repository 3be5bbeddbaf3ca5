import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isAbsolute } from 'node:path';

/** Every pid in /proc (empty without /proc); read synchronously, as /proc's files never wait for a disk. */
export function procPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .map(Number);
  } catch {
    return [];
  }
}

/** One variable of the process's initial environment, or undefined (none, gone, or not ours to read). */
export async function environVar(pid: number, name: string): Promise<string | undefined> {
  const raw = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
  const entry = raw.split('\0').find((e) => e.startsWith(`${name}=`));
  return entry?.slice(name.length + 1);
}

/** Per-boot identity, so a start time from before a reboot never matches a process after it. */
let bootId: Promise<string | null> | undefined;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses): field 3 at 0. */
export function statFields(text: string): string[] {
  return text
    .slice(text.lastIndexOf(')') + 2)
    .trim()
    .split(' ');
}

/**
 * When the process started, unique across pid reuse: `<clock ticks since boot>@<boot id>` (the boot id rather than
 * the boot time, which moves when the wall clock is stepped). Null when it does not exist or this is not Linux.
 */
export async function readProcessStartTime(pid: number): Promise<string | null> {
  try {
    const fields = statFields(await readFile(`/proc/${pid}/stat`, 'utf8'));
    // Field 3 (state) is fields[0], so field 22 (starttime) is fields[19].
    const ticks = fields[19];
    if (!ticks || !/^\d+$/.test(ticks)) return null;
    bootId ??= readFile('/proc/sys/kernel/random/boot_id', 'utf8').then(
      (s) => s.trim(),
      () => null,
    );
    const boot = await bootId;
    return boot ? `${ticks}@${boot}` : ticks;
  } catch {
    return null;
  }
}

/** argv of a running process, or null. */
export async function readCmdline(pid: number): Promise<string[] | null> {
  try {
    const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8');
    if (raw === '') return null; // zombies and kernel threads have none
    const parts = raw.split('\0');
    if (parts.at(-1) === '') parts.pop();
    return parts;
  } catch {
    return null;
  }
}

/** True while a process with this pid exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return statFields(readFileSync(`/proc/${pid}/stat`, 'utf8'))[0] !== 'Z';
  } catch {
    return true; // no /proc (not Linux): trust the signal probe
  }
}

const endsWith = (cmdline: string[], args: string[]): boolean =>
  cmdline.length >= args.length && args.every((arg, i) => cmdline[cmdline.length - args.length + i] === arg);

/**
 * Whether `pid` is still the server launched earlier: same kernel start time, and a command line ending with the
 * recorded arguments (only the tail: an interpreter may precede a script; not /proc/<pid>/exe for the same reason).
 * With `[program, ...args]` whose program is absolute, the tail without it is accepted too: a wrapper script that
 * `exec`s the server no longer shows its own path.
 */
export async function verifyProcess(pid: number, expect: { startTime: string; args: string[] }): Promise<boolean> {
  if (!isAlive(pid)) return false;
  const [startTime, cmdline] = await Promise.all([readProcessStartTime(pid), readCmdline(pid)]);
  if (startTime === null || startTime !== expect.startTime || cmdline === null) return false;
  return matchesArgs(cmdline, expect.args);
}

/** The command-line rule of verifyProcess: the recorded tail, or the tail without an absolute program path. */
function matchesArgs(cmdline: string[], args: string[]): boolean {
  if (endsWith(cmdline, args)) return true;
  const [first, ...rest] = args;
  return first !== undefined && isAbsolute(first) && rest.length > 0 && endsWith(cmdline, rest);
}

/**
 * The live process whose command line matches `args` (as verifyProcess reads it) and whose environment holds
 * `name=value` (a launch secret makes the match certain), found by scanning /proc; null when there is none.
 */
export async function findProcessByEnv(args: string[], name: string, value: string): Promise<number | null> {
  for (const pid of procPids()) {
    const cmdline = await readCmdline(pid);
    if (cmdline === null || !matchesArgs(cmdline, args) || !isAlive(pid)) continue;
    if ((await environVar(pid, name)) === value) return pid;
  }
  return null;
}
