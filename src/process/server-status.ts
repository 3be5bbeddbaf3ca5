/**
 * Reads a game server's player count from its public `GET /status` on its ApiPort (the engine's status host; the
 * `players` field every launcher reads). For maintenance that waits for an empty server.
 */
const HOSTS = ['127.0.0.1', '[::1]'] as const;

/** `players` of the server's status, or null when it did not answer with a count within `timeoutMs`. */
export async function readPlayers(apiPort: number, timeoutMs: number): Promise<number | null> {
  for (const host of HOSTS) {
    try {
      const res = await fetch(`http://${host}:${apiPort}/status`, { signal: AbortSignal.timeout(timeoutMs) });
      if (!res.ok) {
        await res.arrayBuffer();
        return null;
      }
      const body: unknown = await res.json();
      const players = typeof body === 'object' && body !== null && 'players' in body ? body.players : undefined;
      return typeof players === 'number' && Number.isInteger(players) && players >= 0 ? players : null;
    } catch (err) {
      // Only a refused IPv4 connection is worth trying on IPv6 (a status host bound to ::1 only).
      const code = (err as { cause?: { code?: string } }).cause?.code;
      if (code !== 'ECONNREFUSED') return null;
    }
  }
  return null;
}
