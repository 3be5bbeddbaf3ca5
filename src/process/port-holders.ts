import { createSocket } from 'node:dgram';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { procPids } from './proc-info.ts';

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

/** The four tables read at once: this runs before every launch, and each read waits its turn in a busy loop. */
async function wantedInodes(port: number): Promise<Map<string, 'tcp' | 'udp'>> {
  const files = ['tcp', 'tcp6', 'udp', 'udp6'] as const;
  const tables = await Promise.all(files.map((file) => readFile(`/proc/net/${file}`, 'utf8').catch(() => '')));
  const wanted = new Map<string, 'tcp' | 'udp'>();
  files.forEach((file, i) => {
    const proto = file.startsWith('tcp') ? 'tcp' : 'udp';
    for (const inode of socketInodes(tables[i] ?? '', port, proto)) wanted.set(inode, proto);
  });
  return wanted;
}

/**
 * The processes holding `port` as a TCP listener or a bound UDP socket, each once (with the first socket found):
 * /proc/net's socket inodes matched against `/proc/<pid>/fd` links (only processes whose descriptors this user may
 * read). Empty without /proc.
 */
export async function portHolders(port: number): Promise<PortHolder[]> {
  const wanted = await wantedInodes(port);
  if (wanted.size === 0) return [];
  const holders: PortHolder[] = [];
  for (const pid of procPids()) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    let proto: 'tcp' | 'udp' | undefined;
    for (const fd of fds) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      proto = link.startsWith('socket:[') ? wanted.get(link.slice(8, -1)) : undefined;
      if (proto) break;
    }
    if (!proto) continue;
    const name = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '?')).trim();
    holders.push({ pid, name, proto });
  }
  return holders;
}

/** Whether a TCP listener on `port` could bind the wildcard address (`::`, both IPv4 and IPv6) right now. */
function tcpBinds(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '::', ipv6Only: false, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** Whether a UDP socket could bind `port` on the wildcard address (`::`, both IPv4 and IPv6) right now. */
function udpBinds(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createSocket({ type: 'udp6', ipv6Only: false });
    sock.once('error', () => {
      try {
        sock.close();
      } catch {
        // Never bound: nothing to close.
      }
      resolve(false);
    });
    sock.bind({ port, address: '::', exclusive: true }, () => sock.close(() => resolve(true)));
  });
}

/**
 * Whether nothing holds `port`: a TCP listener and a UDP socket both bind it on the wildcard address. Cheap (no
 * /proc), so it comes before `portHolders`. False whenever a bind fails, for whatever reason.
 */
export async function portBindsFree(port: number): Promise<boolean> {
  return (await tcpBinds(port)) && (await udpBinds(port));
}
