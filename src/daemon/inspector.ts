import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InspectionEvent } from 'xstate';
import type { Logger } from '../log.ts';

/** Inspection events kept for a browser that connects late (the inspector UI draws the charts from them). */
const KEPT = 200;
const UI = 'https://stately.ai/inspect';
/** Fields of a context or an event never sent: the check-in secret of the running server (PROCESS_STARTED). */
const HIDDEN = new Set(['secret']);

const hide = <T>(fields: T): T =>
  fields !== null && typeof fields === 'object'
    ? (Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, HIDDEN.has(k) ? '[hidden]' : v])) as T)
    : fields;

/**
 * `watchdog start --inspect`: a relay on 127.0.0.1 serves a page embedding the Stately inspector and forwards it what
 * the actors' WebSocket inspector sends. Not the package's own relay: it listens everywhere and opens a browser.
 */
export async function startInspector(port: number, log: Logger) {
  const [{ WebSocket, WebSocketServer }, { createWebSocketInspector }] = await Promise.all([
    import('ws'),
    import('@statelyai/inspect'),
  ]);
  let wsUrl = '';
  const http = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(bridgePage(wsUrl));
  });
  const relay = new WebSocketServer({ server: http, maxPayload: 4 * 1024 * 1024 });
  const kept: string[] = [];
  relay.on('connection', (ws) => {
    for (const message of kept) ws.send(message);
    ws.on('message', (data) => {
      const message = data.toString();
      kept.push(message);
      if (kept.length > KEPT) kept.shift();
      for (const client of relay.clients)
        if (client !== ws && client.readyState === WebSocket.OPEN) client.send(message);
    });
    ws.on('error', () => ws.terminate());
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', (err) =>
      reject(new Error(`--inspect: cannot listen on 127.0.0.1:${port}: ${err.message}`, { cause: err })),
    );
    http.listen(port, '127.0.0.1', resolve);
  });
  const bound = (http.address() as AddressInfo).port;
  wsUrl = `ws://127.0.0.1:${bound}`;
  const inspector = createWebSocketInspector({
    url: wsUrl,
    sanitizeContext: hide,
    sanitizeEvent: hide,
  });
  const url = `http://127.0.0.1:${bound}/`;
  log.info(`inspector: open ${url} in a browser on this machine (the Stately inspector, fed from ${wsUrl})`);
  return {
    inspect: (event: InspectionEvent) => inspector.inspect.next?.(event),
    url,
    async stop(): Promise<void> {
      inspector.stop();
      for (const client of relay.clients) client.terminate();
      await new Promise<void>((resolve) => relay.close(() => http.close(() => resolve())));
    },
  };
}

/** The page that embeds the inspector UI and posts it every event the relay forwards, once it says it is ready. */
function bridgePage(wsUrl: string): string {
  return `<!doctype html>
<html><head><title>Watchdog: Stately inspector</title>
<style>html,body{height:100%;margin:0}iframe{width:100%;height:100%;border:0}</style></head>
<body><iframe id="ui" src="${UI}"></iframe>
<script>
const ui = document.getElementById('ui');
const waiting = [];
let ready = false;
addEventListener('message', (e) => {
  if (e.data && e.data.type === '@statelyai.connected') {
    ready = true;
    for (const m of waiting.splice(0)) ui.contentWindow.postMessage(m, '*');
  }
});
new WebSocket(${JSON.stringify(wsUrl)}).onmessage = (e) => {
  const m = JSON.parse(e.data);
  if (ready) ui.contentWindow.postMessage(m, '*');
  else waiting.push(m);
};
</script></body></html>
`;
}
