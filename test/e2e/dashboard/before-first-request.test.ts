/**
 * The daemon builds its HTTP app at the first request that is not a check-in or a health probe
 * (src/daemon/run.ts). What happened before that request must not be lost: a crash of the real demo server, seen
 * through /health alone, is then counted by /metrics and listed in the dashboard's `hello`.
 */
import { readFile } from 'node:fs/promises';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { parseExposition, sample } from '../../http/_support/metrics.ts';

const test = daemonSuite('e2e :: facts from before the first request to the app', {
  config: async () => testConfig({ instances: [{ key: 'demo', port: await freePort() }] }),
});

/** The daemon's child processes: the demo server is its only one. */
async function children(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return text.trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The demo's state as GET /health (answered before the app) gives it. */
async function healthState(url: string): Promise<string | undefined> {
  const body = (await (await fetch(`${url}/health`)).json()) as { instances: Record<string, string> };
  return body.instances.demo;
}

/** The `hello` event of GET /events: the first the stream sends. */
async function hello(url: string): Promise<{ recent: { type: string; event: { key?: string; reason?: string } }[] }> {
  const ctrl = new AbortController();
  const res = await fetch(`${url}/events`, { signal: ctrl.signal });
  assert.is(res.status, 200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  try {
    for (let i = 0; i < 100; i++) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
      const m = /event: hello\ndata: (.*)\n\n/.exec(text);
      if (m?.[1]) return JSON.parse(m[1]);
    }
  } finally {
    ctrl.abort();
  }
  throw new Error(`no hello in ${text.slice(0, 200)}`);
}

test('before-first-request :: a crash seen only through /health is counted by /metrics and listed in hello', async ({
  daemon,
}) => {
  const d = daemon!;
  const pid = d.proc.pid ?? 0;
  const first = await waitFor(
    'demo running, seen through /health',
    async () => ((await healthState(d.url)) === 'server.running' ? (await children(pid))[0] : undefined),
    15_000,
    50,
  );
  process.kill(first, 'SIGKILL');
  await waitFor(
    'demo relaunched, seen through /health',
    async () => {
      const [now] = await children(pid);
      return now !== undefined && now !== first && (await healthState(d.url)) === 'server.running';
    },
    15_000,
    50,
  );

  const res = await fetch(`${d.url}/metrics`);
  assert.is(res.status, 200);
  const families = parseExposition(await res.text());
  assert.is(sample(families, 'watchdog_instance_restarts_total', { instance: 'demo', reason: 'crash' }), 1);

  const { recent } = await hello(d.url);
  const restarts = recent.filter((r) => r.type === 'instance:restart' && r.event.key === 'demo');
  assert.equal(
    restarts.map((r) => r.event.reason),
    ['crash'],
  );
  assert.ok(
    recent.some((r) => r.type === 'instance:state'),
    'the states the demo went through at start are listed',
  );
});

test.run();
