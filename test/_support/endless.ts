import type { ServerResponse } from 'node:http';

const CHUNK = Buffer.alloc(1 << 20);

/**
 * Answers 200 with `head` and then zeros without end (chunked: no Content-Length), as fast as the reader takes them.
 * Resolves, once the reader hangs up, with the bytes handed to the socket.
 */
export function sendEndless(res: ServerResponse, head: Buffer, type = 'application/octet-stream'): Promise<number> {
  return new Promise((resolve) => {
    let sent = head.length;
    res.writeHead(200, { 'content-type': type });
    res.write(head);
    const pump = () => {
      while (!res.destroyed) {
        sent += CHUNK.length;
        if (!res.write(CHUNK)) return;
      }
    };
    res.on('drain', pump);
    res.on('close', () => resolve(sent));
    pump();
  });
}
