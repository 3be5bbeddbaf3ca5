import { createServer, type Server } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { killGroup, running, waitStatus } from '../resilience/_support/daemon-crash.ts';

/**
 * The chat webhook is outside the machine, so it is faked (a real HTTP server on loopback) and made to fail in
 * each way a chat service does. Whatever it does, hang kills and restarts must keep their own schedule: alerts
 * are queued, never awaited by an instance. Four daemons, one per fault, run side by side.
 */
type Mode = 'down' | 'slow' | '429' | '500';
const MODES: Mode[] = ['down', 'slow', '429', '500'];

interface Receiver {
  url: string;
  hits: number;
  close(): Promise<void>;
}

async function receiver(mode: Mode): Promise<Receiver> {
  if (mode === 'down') {
    // A port nobody listens on: connection refused.
    return { url: `http://127.0.0.1:${await freePort()}/hook`, hits: 0, close: async () => {} };
  }
  const r: Receiver = { url: '', hits: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    r.hits += 1;
    req.resume();
    req.on('end', () => {
      if (mode === 'slow') setTimeout(() => res.writeHead(204).end(), 10_000);
      else if (mode === '429') res.writeHead(429, { 'Retry-After': '30' }).end('slow down');
      else res.writeHead(500).end('oops');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  r.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hook`;
  r.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

interface Outcome {
  /** From daemon start to the third hang kill. */
  hangKillsMs: number;
  /** From the control restart to the new server. */
  restartMs: number;
  health: number;
}
interface Case {
  receiver: Receiver;
  daemon: RunningDaemon;
  outcome: Promise<Outcome>;
}
const cases = new Map<Mode, Case>();
const servers = new Set<number>();

/** What each test asserts on; the four run at the same time so the slow waits overlap. */
async function observe(d: RunningDaemon, startedAt: number): Promise<Outcome> {
  // Three hang kills take ~3 × TimeoutSeconds; had one alert been awaited (10 s slow, 30 s Retry-After,
  // retries with back-off) the third would come far later than the bound the test sets.
  const s = await waitStatus(d, 'h', 'tok', 'three hang kills', (st) => st.restarts >= 3, 25_000);
  const hangKillsMs = Date.now() - startedAt;
  if (s.pid) servers.add(s.pid);
  // A control restart is acted on at once too (hang.mjs acknowledges /shutdown and stays: killed after 1 + 1 s).
  const before = await waitStatus(d, 'h', 'tok', 'server.running', running);
  const asked = Date.now();
  if ((await d.control('h', 'tok', 'restart')) !== 200) throw new Error('restart refused');
  const after = await waitStatus(d, 'h', 'tok', 'relaunched', (st) => st.pid !== null && st.pid !== before.pid, 10_000);
  servers.add(after.pid!);
  return { hangKillsMs, restartMs: Date.now() - asked, health: (await fetch(`${d.url}/health`)).status };
}

const test = suite('e2e :: faults: a failing chat webhook never delays hang kills or restarts');

test.before(async () => {
  await Promise.all(
    MODES.map(async (mode) => {
      const r = await receiver(mode);
      const yaml = testConfig({
        webhook: r.url,
        extra: ['  WebhookTimeoutSeconds: 30', '  WebhookRetries: 3'].join('\n'),
        // hang.mjs checks in once, then never again: a hang kill every TimeoutSeconds, each one an alert.
        instances: [{ key: 'h', port: await freePort(), runCommand: fixture('hang.mjs'), timeoutSeconds: 2 }],
      });
      const startedAt = Date.now();
      const daemon = await startDaemon(yaml);
      const outcome = observe(daemon, startedAt);
      outcome.catch(() => undefined); // awaited by its test
      cases.set(mode, { receiver: r, daemon, outcome });
    }),
  );
});

test.after(async () => {
  await Promise.all(
    [...cases.values()].map(async (c) => {
      await c.outcome.catch(() => undefined);
      await c.daemon.stop();
      await c.daemon.cleanup();
      await c.receiver.close();
    }),
  );
  for (const pid of servers) killGroup(pid);
});

for (const mode of MODES) {
  test(`webhook :: webhook ${mode === 'down' ? 'down' : mode === 'slow' ? 'slow (10 s)' : `answering ${mode}`}: hang kills on schedule, a restart at once, the daemon fine`, async () => {
    const c = cases.get(mode)!;
    const d = c.daemon;
    const o = await c.outcome;
    assert.ok(o.hangKillsMs < 25_000, `three hang kills took ${o.hangKillsMs} ms`);
    assert.ok(o.restartMs < 10_000, `the restart took ${o.restartMs} ms`);
    assert.is(o.health, 200, 'daemon healthy');
    assert.match(d.log(), /Server `h` timed out and will be killed/);
    if (mode === 'down') {
      await waitFor(
        'the dropped message logged',
        () => /chat webhook refused or unreachable; message dropped/.test(d.log()),
        10_000,
      );
    } else if (mode === 'slow') {
      assert.ok(c.receiver.hits >= 1, 'the slow receiver was reached');
    } else if (mode === '429') {
      // Retry-After: 30 is honoured, so only the first try has happened yet.
      assert.ok(c.receiver.hits >= 1, `receiver hit ${c.receiver.hits} times`);
    } else {
      await waitFor('retries of a 500', () => c.receiver.hits >= 2, 5000);
    }
  });
}

test.run();
