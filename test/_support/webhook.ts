import { createServer, type IncomingMessage, type Server } from 'node:http';
import { sendEndless } from './endless.ts';

export interface WebhookReceiver {
  url: string;
  messages: Array<{ content: string; body: unknown; headers: IncomingMessage['headers'] }>;
  /** With `endless`: the bytes each answer had sent when the daemon hung up, in order. */
  cutOff: number[];
  close(): Promise<void>;
}

/**
 * A loopback chat-webhook stand-in that records every POST and answers 204; `endless`: answers each with bytes
 * without end instead, `answer`: with 200 and this body.
 */
export async function startWebhookReceiver(
  opts: { endless?: boolean; answer?: string } = {},
): Promise<WebhookReceiver> {
  const messages: WebhookReceiver['messages'] = [];
  const cutOff: number[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      try {
        const parsed = JSON.parse(body) as { content?: string };
        messages.push({ content: parsed.content ?? '', body: parsed, headers: req.headers });
      } catch {
        messages.push({ content: '', body, headers: req.headers });
      }
      if (opts.endless) void sendEndless(res, Buffer.from('{"id": "')).then((n) => cutOff.push(n));
      else if (opts.answer !== undefined) res.writeHead(200, { 'content-type': 'application/json' }).end(opts.answer);
      else res.writeHead(204).end();
    });
  });
  return { ...(await serveLoopback(server, '/hook')), messages, cutOff };
}

/** Listens on a free loopback port; `url` is `path` there, and `close` drops open connections too. */
export async function serveLoopback(server: Server, path: string): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
