import { createServer, type Server } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, reported, startDaemon } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { killGroup, running, waitStatus } from '../resilience/_support/daemon-crash.ts';

/**
 * The chat webhook is outside the machine, so it is faked (a real HTTP server on loopback) and made to fail in
 * each way a chat service does. Whatever it does, hang kills and restarts must keep their own schedule: alerts
 * are queued, never awaited by an instance. Four daemons, one per fault, run side by side.
 */
type Mode = 'down' | 'slow' | '429' | '500';
/**
 * TimeoutSeconds of the hanging server: also the time its first check-in has after a launch, which a node process
 * on a loaded machine needs (past it, a launch is a startup failure, and three of them stop the instance).
 */
const TIMEOUT_S = 5;
const MODES: Mode[] = ['down', 'slow', '429', '500'];

interface Receiver {
  url: string;
  hits: number;
  /** Requests answered so far. */
  answered: number;
  close(): Promise<void>;
}

async function receiver(mode: Mode): Promise<Receiver> {
  if (mode === 'down') {
    // A port nobody listens on: connection refused.
    return { url: `http://127.0.0.1:${await freePort()}/hook`, hits: 0, answered: 0, close: async () => {} };
  }
  const r: Receiver = { url: '', hits: 0, answered: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    r.hits += 1;
    req.resume();
    const answer = (status: number, headers: Record<string, string> = {}) => {
      r.answered += 1;
      res.writeHead(status, headers).end();
    };
    req.on('end', () => {
      // slow: never answers while the test runs (the daemon would wait WebhookTimeoutSeconds, 120 s, for it).
      if (mode === 'slow') return;
      // 429: the retry comes only after Retry-After (60 s, the sender's ceiling).
      if (mode === '429') answer(429, { 'Retry-After': '60' });
      else answer(500);
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

/** What the receiver had seen at a moment: its hits and answers. */
interface Seen {
  hits: number;
  answered: number;
}
interface Outcome {
  /** The receiver at the third hang kill, and once the control restart had relaunched the server. */
  atKills: Seen;
  atRestart: Seen;
  health: number;
}
interface Case {
  receiver: Receiver;
  daemon: RunningDaemon;
  outcome: Promise<Outcome>;
}
const cases = new Map<Mode, Case>();
const servers = new Set<number>();

/**
 * What each test asserts on; the four run at the same time so the waits overlap. Three hang kills take about
 * 3 x TimeoutSeconds; had the first alert been awaited, the second kill would wait for its answer (never, from the
 * slow receiver) or its retry (60 s after a 429). The deadlines are generous: they only catch a hang.
 */
async function observe(d: RunningDaemon, r: Receiver): Promise<Outcome> {
  try {
    return await observeKills(d, r);
  } catch (err) {
    // What the daemon said is what explains a wait that never ended.
    throw new Error(`${(err as Error).message}\n${d.log().split('\n').slice(-30).join('\n')}`, { cause: err });
  }
}

async function observeKills(d: RunningDaemon, r: Receiver): Promise<Outcome> {
  const s = await waitStatus(d, 'h', 'tok', 'three hang kills', (st) => st.restarts >= 3, 90_000);
  const atKills = { hits: r.hits, answered: r.answered };
  if (s.pid) servers.add(s.pid);
  // A control restart is acted on at once too (hang.mjs acknowledges /shutdown and stays: killed after 1 + 1 s).
  const before = await waitStatus(d, 'h', 'tok', 'server.running', running, 20_000);
  if ((await d.control('h', 'tok', 'restart')) !== 200) throw new Error('restart refused');
  const after = await waitStatus(d, 'h', 'tok', 'relaunched', (st) => st.pid !== null && st.pid !== before.pid, 20_000);
  servers.add(after.pid!);
  const atRestart = { hits: r.hits, answered: r.answered };
  return { atKills, atRestart, health: (await fetch(`${d.url}/health`)).status };
}

const test = suite('e2e :: faults: a failing chat webhook never delays hang kills or restarts');

test.before(
  reported(async () => {
    // Started one after the other (four node daemons starting at once on a loaded machine can miss the 15 s
    // startDaemon gives each), each observed from its start: the waits still overlap.
    for (const mode of MODES) {
      const r = await receiver(mode);
      const yaml = testConfig({
        webhook: r.url,
        extra: ['  WebhookTimeoutSeconds: 120', '  WebhookRetries: 3'].join('\n'),
        // hang.mjs checks in once, then never again: a hang kill every TimeoutSeconds, each one an alert.
        instances: [{ key: 'h', port: await freePort(), runCommand: fixture('hang.mjs'), timeoutSeconds: TIMEOUT_S }],
      });
      try {
        const daemon = await startDaemon(yaml);
        const outcome = observe(daemon, r);
        outcome.catch(() => undefined); // awaited by its test
        cases.set(mode, { receiver: r, daemon, outcome });
      } catch (err) {
        await r.close();
        throw err;
      }
    }
  }),
);

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
  test(`webhook :: webhook ${mode === 'down' ? 'down' : mode === 'slow' ? 'never answering' : `answering ${mode}`}: hang kills on schedule, a restart at once, the daemon fine`, async () => {
    const c = cases.get(mode)!;
    const d = c.daemon;
    const o = await c.outcome;
    assert.is(o.health, 200, 'daemon healthy');
    assert.match(d.log(), /Server `h` timed out and will be killed/);
    if (mode === 'down') {
      await waitFor(
        'the dropped message logged',
        () => /chat webhook refused or unreachable; message dropped/.test(d.log()),
        10_000,
      );
    } else if (mode === 'slow') {
      // The first alert was still unanswered when the third hang kill and the restart came: neither waited for it.
      assert.equal(o.atKills, { hits: 1, answered: 0 }, 'three hang kills while the first alert was outstanding');
      assert.equal(o.atRestart, { hits: 1, answered: 0 }, 'the restart while the first alert was outstanding');
    } else if (mode === '429') {
      // Retry-After: 60 is honoured, so only the first try had happened: neither waited for the retry.
      assert.equal(o.atKills, { hits: 1, answered: 1 }, 'three hang kills before the retry of the first alert');
      assert.equal(o.atRestart, { hits: 1, answered: 1 }, 'the restart before the retry of the first alert');
    } else {
      await waitFor('retries of a 500', () => c.receiver.hits >= 2, 5000);
    }
  });
}

test.run();
