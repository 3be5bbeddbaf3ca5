import { readdir, readFile, readlink } from 'node:fs/promises';

/** A process holding a socket bound to a port. */
export interface PortHolder {
  pid: number;
  /** The command name (`/proc/<pid>/comm`), or `?` when it cannot be read. */
  name: string;
  proto: 'tcp' | 'udp';
}

/** TCP state LISTEN in /proc/net/tcp; a server's UDP socket shows 07 (unconnected) and counts whatever its state. */
const TCP_LISTEN = '0A';

/**
 * The inodes of the sockets bound to `port` in one /proc/net table: listening ones for TCP, every one for UDP.
 * Lines are `sl local_address rem_address st … uid timeout inode`, the address as hex `IP:PORT`.
 */
export function socketInodes(table: string, port: number, proto: 'tcp' | 'udp'): string[] {
  const inodes: string[] = [];
  for (const line of table.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    const local = f[1];
    const inode = f[9];
    if (!local || !inode || inode === '0') continue;
    if (Number.parseInt(local.slice(local.lastIndexOf(':') + 1), 16) !== port) continue;
    if (proto === 'tcp' && f[3] !== TCP_LISTEN) continue;
    inodes.push(inode);
  }
  return inodes;
}

async function inodesFor(port: number, proto: 'tcp' | 'udp'): Promise<Set<string>> {
  const found = new Set<string>();
  for (const file of [proto, `${proto}6`]) {
    const table = await readFile(`/proc/net/${file}`, 'utf8').catch(() => '');
    for (const inode of socketInodes(table, port, proto)) found.add(inode);
  }
  return found;
}

/**
 * The processes holding `port` as a TCP listener or a bound UDP socket: the sockets' inodes from
 * /proc/net/{tcp,tcp6,udp,udp6}, matched against every process's `/proc/<pid>/fd` links (`socket:[inode]`). Only
 * processes whose descriptors this user may read are seen (all of them as root, or under the same user). Empty
 * without /proc. A process holding both appears once per protocol.
 *
 * @example
 * for (const h of await portHolders(1212)) log.warn(`port 1212 held by pid ${h.pid} (${h.name})`);
 */
export async function portHolders(port: number): Promise<PortHolder[]> {
  const wanted = new Map<string, 'tcp' | 'udp'>();
  for (const proto of ['tcp', 'udp'] as const)
    for (const inode of await inodesFor(port, proto)) wanted.set(inode, proto);
  if (wanted.size === 0) return [];
  const holders: PortHolder[] = [];
  const names = await readdir('/proc').catch(() => [] as string[]);
  for (const entry of names) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    const protos = new Set<'tcp' | 'udp'>();
    for (const fd of fds) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const proto = link.startsWith('socket:[') ? wanted.get(link.slice(8, -1)) : undefined;
      if (proto) protos.add(proto);
    }
    if (protos.size === 0) continue;
    const name = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '?')).trim();
    for (const proto of protos) holders.push({ pid, name, proto });
  }
  return holders;
}
