import { createReadStream, readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The loopback build CDN: `/manifest` (the Robust.Cdn shape) and `/files/<name>`. Its mode decides how the next
 * requests go: served whole, truncated, a manifest with a wrong hash, a stalled body, or down (503 everywhere).
 * `endless` (while set) is one more build, newest of all, whose file is a zip head and then zeros without end, of
 * unknown length. `/hub/…` stands for a server hub: 404 to every request, or with `hubEndless` an answer without end.
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
  endless: PublishedBuild | null;
  hubEndless: boolean;
  /** Bytes each endless answer had sent when its reader hung up: the hub's, the endless build's. */
  cutOff: { hub: number[]; file: number[] };
  close(): Promise<void>;
}

function manifest(cdn: SoakCdn): string {
  const builds: Record<string, unknown> = {};
  for (const b of cdn.endless ? [...cdn.builds, cdn.endless] : cdn.builds) {
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

const ZEROS = Buffer.alloc(1 << 20);

/** 200, `head`, then zeros as fast as the reader takes them (chunked: no Content-Length), until it hangs up. */
function sendEndless(res: ServerResponse, head: string, open: Set<ServerResponse>, cutOff: number[]): void {
  let sent = head.length;
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  res.write(head);
  const pump = () => {
    while (!res.destroyed) {
      sent += ZEROS.length;
      if (!res.write(ZEROS)) return;
    }
  };
  res.on('drain', pump);
  open.add(res);
  res.on('close', () => {
    open.delete(res);
    cutOff.push(sent);
  });
  pump();
}

export async function startCdn(): Promise<SoakCdn> {
  const stalled = new Set<ServerResponse>();
  const cdn: SoakCdn = {
    origin: '',
    mode: 'ok',
    builds: [],
    requests: 0,
    endless: null,
    hubEndless: false,
    cutOff: { hub: [], file: [] },
    close: async () => {
      for (const res of stalled) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = createServer((req, res) => {
    cdn.requests++;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path.startsWith('/hub/'))
      return cdn.hubEndless ? sendEndless(res, '{"', stalled, cdn.cutOff.hub) : res.writeHead(404).end('not listed');
    if (cdn.endless && path === `/files/${cdn.endless.name}`)
      return sendEndless(res, 'PK\x03\x04', stalled, cdn.cutOff.file);
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
