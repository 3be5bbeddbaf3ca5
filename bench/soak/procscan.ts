import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * The soak's view of its processes, read from /proc: every game server it caused to run (argv holds
 * `soak.run=<run>` and `watchdog.key=<key>`) and every child such a server forked (`soak-child <run> <key> <ppid>`).
 */
export interface OurProcess {
  pid: number;
  kind: 'server' | 'child';
  key: string;
  /** For a child: the server that forked it (from its argv); for a server: its parent process. */
  parent: number | null;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** True while the pid is a live process (not a zombie). */
export function isLive(pid: number): boolean {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return false;
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  return state !== 'Z' && state !== 'X';
}

/** The process state letter (T when stopped), or null when gone. */
export function procState(pid: number): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  return stat === null ? null : (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null);
}

/** The parent pid, or null when gone. */
function parentOf(pid: number): number | null {
  const stat = readText(`/proc/${pid}/stat`);
  const ppid = stat === null ? Number.NaN : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return Number.isFinite(ppid) ? ppid : null;
}

export function scanOurs(run: string): OurProcess[] {
  const out: OurProcess[] = [];
  const runCvar = `soak.run=${run}`;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const cmdline = readText(`/proc/${pid}/cmdline`);
    if (!cmdline) continue;
    const argv = cmdline.split('\0');
    const child = argv.indexOf('soak-child');
    if (child >= 0 && argv[child + 1] === run) {
      if (isLive(pid))
        out.push({ pid, kind: 'child', key: argv[child + 2] ?? '', parent: Number(argv[child + 3] ?? 0) || null });
      continue;
    }
    if (!argv.includes(runCvar)) continue;
    const key = argv.find((a) => a.startsWith('watchdog.key='))?.slice('watchdog.key='.length);
    if (key !== undefined && isLive(pid)) out.push({ pid, kind: 'server', key, parent: parentOf(pid) });
  }
  return out;
}

/** Ports on which `pid` holds a listening TCP socket (IPv4), from its fds and /proc/net/tcp. */
export function listeningPorts(pid: number, listeners: ReadonlyMap<string, number>): number[] {
  const ports: number[] = [];
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return ports;
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const port = inode === undefined ? undefined : listeners.get(inode);
    if (port !== undefined) ports.push(port);
  }
  return ports;
}

/** Listening sockets of /proc/net/tcp: inode → local port. */
export function tcpListeners(): Map<string, number> {
  const map = new Map<string, number>();
  const text = readText('/proc/net/tcp') ?? '';
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    // st 0A is LISTEN; local_address is HEXIP:HEXPORT.
    if (f[3] !== '0A' || !f[1] || !f[9]) continue;
    map.set(f[9], Number.parseInt(f[1].split(':')[1] ?? '0', 16));
  }
  return map;
}
