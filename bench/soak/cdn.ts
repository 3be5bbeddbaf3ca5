import { createReadStream, readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The loopback build CDN: `/manifest` (the Robust.Cdn shape) and `/files/<name>`. Its mode decides how the next
 * requests go: served whole, truncated, a manifest with a wrong hash, a stalled body, or down (503 everywhere).
 */
export type CdnMode = 'ok' | 'truncate' | 'wrong-hash' | 'stall' | 'down';

export interface PublishedBuild {
  key: string;
  time: string;
  file: string;
  name: string;
  sha256: string;
}

export interface SoakCdn {
  origin: string;
  mode: CdnMode;
  builds: PublishedBuild[];
  requests: number;
  close(): Promise<void>;
}

function manifest(cdn: SoakCdn): string {
  const builds: Record<string, unknown> = {};
  for (const b of cdn.builds) {
    // A wrong hash is one flipped hex digit: the download completes and must still be refused.
    const sha = cdn.mode === 'wrong-hash' ? `${b.sha256[0] === '0' ? '1' : '0'}${b.sha256.slice(1)}` : b.sha256;
    builds[b.key] = { time: b.time, server: { 'linux-x64': { url: `${cdn.origin}/files/${b.name}`, sha256: sha } } };
  }
  return JSON.stringify({ builds });
}

function serveFile(cdn: SoakCdn, file: string, res: ServerResponse, stalled: Set<ServerResponse>): void {
  const data = readFileSync(file);
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length });
  if (cdn.mode === 'truncate') {
    res.write(data.subarray(0, data.length >> 1));
    setTimeout(() => res.socket?.destroy(), 20);
  } else if (cdn.mode === 'stall') {
    // Half, then nothing until the daemon's DownloadTimeoutSeconds gives up (or the soak closes it).
    res.write(data.subarray(0, data.length >> 1));
    stalled.add(res);
    res.on('close', () => stalled.delete(res));
  } else createReadStream(file).pipe(res);
}

export async function startCdn(): Promise<SoakCdn> {
  const stalled = new Set<ServerResponse>();
  const cdn: SoakCdn = {
    origin: '',
    mode: 'ok',
    builds: [],
    requests: 0,
    close: async () => {
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = createServer((req, res) => {
    cdn.requests++;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (cdn.mode === 'down') return res.writeHead(503).end('down');
    if (path === '/manifest') return res.writeHead(200, { 'content-type': 'application/json' }).end(manifest(cdn));
    const build = cdn.builds.find((b) => path === `/files/${b.name}`);
    if (!build) return res.writeHead(404).end('not found');
    serveFile(cdn, build.file, res, stalled);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cdn.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return cdn;
}
