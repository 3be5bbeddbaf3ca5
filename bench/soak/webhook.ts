import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the loopback chat webhook answers: 204, 429 with Retry-After, 500, or not at all (the daemon times out). */
export type WebhookMode = 'ok' | '429' | '500' | 'silent';

export interface SoakWebhook {
  url: string;
  mode: WebhookMode;
  /** Messages answered 204 (delivered), by the instance key they name. */
  delivered: Map<string, number>;
  posts: number;
  close(): Promise<void>;
}

/** `Server \`key\` …`: the daemon names the instance in backticks (src/notify/messages.ts). */
const keyOf = (content: string): string => /`([^`]+)`/.exec(content)?.[1] ?? '?';

export async function startWebhook(): Promise<SoakWebhook> {
  const silent = new Set<ServerResponse>();
  const hook: SoakWebhook = {
    url: '',
    mode: 'ok',
    delivered: new Map(),
    posts: 0,
    close: async () => {
      for (const res of silent) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString('utf8');
    });
    req.on('end', () => {
      hook.posts++;
      if (hook.mode === 'silent') {
        // Held until the daemon gives up (WebhookTimeoutSeconds) or the soak ends.
        silent.add(res);
        res.on('close', () => silent.delete(res));
        return;
      }
      if (hook.mode === '429') return res.writeHead(429, { 'Retry-After': '1' }).end('slow down');
      if (hook.mode === '500') return res.writeHead(500).end('oops');
      let content = '';
      try {
        content = String((JSON.parse(body) as { content?: unknown }).content ?? '');
      } catch {
        // Counted under '?': a body that is not JSON is still a message.
      }
      const key = keyOf(content);
      hook.delivered.set(key, (hook.delivered.get(key) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return hook;
}
