import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { isIPv6 } from 'node:net';
import { monotonicMs } from '../clock.ts';
import type { Logger } from '../log.ts';

/** Players over UDP (the protocol: README.md beside this file); silence longer than the timeout drops one. */
export interface Player {
  name: string;
  /** Apart, as announcements need them: the `address:port` key would not parse back (IPv6 has colons). */
  address: string;
  port: number;
  lastSeen: number;
}

const MAX_NAME = 32;

export async function startPlayers(opts: {
  host: string;
  port: number;
  timeoutSeconds: number;
  log: Logger;
  /** Called after every change of the player count. */
  onChange?: (count: number) => void;
}) {
  const { log } = opts;
  const players = new Map<string, Player>();
  let closed = false;
  const socket: Socket = createSocket({ type: isIPv6(opts.host) ? 'udp6' : 'udp4' });
  const reply = (to: RemoteInfo, text: string) => socket.send(text, to.port, to.address);
  const changed = () => opts.onChange?.(players.size);

  socket.on('message', (data, from) => {
    const endpoint = `${from.address}:${from.port}`;
    const text = data.toString('utf8').trim();
    const [command = '', ...rest] = text.split(/\s+/);
    const known = players.get(endpoint);
    if (known) known.lastSeen = monotonicMs();
    switch (command.toLowerCase()) {
      case 'join': {
        const name = rest.join(' ').slice(0, MAX_NAME);
        if (name === '') return reply(from, 'error join needs a name: join <name>');
        if (known) {
          known.name = name;
        } else {
          players.set(endpoint, { name, address: from.address, port: from.port, lastSeen: monotonicMs() });
          log.info(`player joined: ${name}`, { endpoint, players: players.size });
          changed();
        }
        return reply(from, `welcome ${name}`);
      }
      case 'leave':
        if (known) {
          players.delete(endpoint);
          log.info(`player left: ${known.name}`, { endpoint, players: players.size });
          changed();
        }
        return reply(from, 'bye');
      case 'ping':
        return reply(from, `pong ${players.size}`);
      default:
        return reply(from, `error unknown command "${command.slice(0, 20)}"; send join <name>, leave or ping`);
    }
  });

  const timeoutMs = opts.timeoutSeconds * 1000;
  const sweeper = setInterval(
    () => {
      const now = monotonicMs();
      for (const [endpoint, p] of players) {
        if (now - p.lastSeen <= timeoutMs) continue;
        players.delete(endpoint);
        log.info(`player timed out: ${p.name}`, { endpoint, players: players.size });
        changed();
      }
    },
    Math.min(1000, timeoutMs / 2),
  );

  socket.bind(opts.port, opts.host);
  await once(socket, 'listening').catch((err: unknown) => {
    clearInterval(sweeper);
    try {
      socket.close();
    } catch {
      // already closed by the failed bind
    }
    throw err;
  });
  socket.on('error', (err) => log.warn('udp socket error', { error: err }));

  return {
    count: () => players.size,
    list: (): Player[] => [...players.values()],
    /** Sends `announce <text>` to every joined player; returns how many it was sent to (0 after `close`). */
    broadcast: (text: string): number => {
      // A closed dgram socket throws on send; an update can still arrive while the server stops.
      if (closed) return 0;
      // One line per datagram, so a player can read it like any answer.
      const datagram = `announce ${text.replace(/\s+/g, ' ').trim()}`;
      // Send failures (e.g. an unreachable player) reach the socket's 'error' listener, which only warns.
      for (const p of players.values()) socket.send(datagram, p.port, p.address);
      return players.size;
    },
    close: () => {
      closed = true;
      clearInterval(sweeper);
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}

export type Players = Awaited<ReturnType<typeof startPlayers>>;
