/**
 * Exhausted descriptors used to leave an instance down for good; checked here on the real daemon under a real low
 * descriptor limit (`prlimit`) with a real fixture server and real idle connections from 127.0.0.1:
 * (a) with the derived connection cap, idle connections holding every slot never stop the server's check-ins, so it
 *     is never killed as hung;
 * (b) with the cap set above the limit on purpose, the connections do exhaust the daemon's descriptors: the relaunch
 *     after a crash is blocked (EMFILE), retried with back-off, and the instance runs again by itself once the
 *     connections are gone, never `stopped.failing`, with one chat message for the episode and one at its end.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { basic, type RunningDaemon, type StatusJson } from '../../_support/daemon.ts';
import { freePort, ROOT, waitFor } from '../../_support/env.ts';
import { startWebhookReceiver } from '../../_support/webhook.ts';
import { statusOf, waitStatus } from './_support/daemon-crash.ts';
import { LIMIT, withLimitedDaemon } from './_support/descriptor-pressure.ts';

const FIXTURE = join(ROOT, 'test/fixtures/servers/exit-on-file.mjs');
const hasPrlimit = spawnSync('prlimit', ['--version']).status === 0;
/** Idle connections opened in the first test: several times the cap (128), so most must be evicted. */
const WANT_OPENED = 400;
/** TimeoutSeconds of the first test's server, which checks in every 300 ms. */
const TIMEOUT_S = 3;
/** Check-ins seen accepted while the connections hold the cap: 12 × 300 ms is more than the whole timeout. */
const WANT_CHECKINS = 12;
/** The connection caps set above the limit on purpose, so connections can take every descriptor. */
const NO_CAP = 'Connections:\n  MaxConnections: 5000\n  MaxConnectionsPerSource: 5000';

const metricsText = async (d: RunningDaemon) =>
  (await fetch(`${d.url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();

/** The instance's first server, once it runs. */
const demoRunning = (d: RunningDaemon) =>
  waitStatus(d, 'demo', 'tok', 'server.running', (s) => s.state === 'server.running', 30_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${d.log()}`);
  });

const test = suite('e2e :: resilience: descriptor pressure');

/** Registers a test that needs `prlimit`: skipped, saying why, where it is not installed. */
function limited(name: string, fn: () => Promise<void>): void {
  if (hasPrlimit) {
    test(name, fn);
    return;
  }
  console.log(`skipped "${name}": prlimit (util-linux) is not installed, so the daemon cannot get a low limit`);
  test.skip(name, fn);
}

limited('descriptors :: idle connections holding the cap never stop check-ins: the server is not killed as hung', () =>
  withLimitedDaemon(
    'wd-fds-a-',
    async () => testConfig({ instances: [{ port: await freePort(), runCommand: FIXTURE, timeoutSeconds: TIMEOUT_S }] }),
    async ({ daemon, press }) => {
      assert.match(daemon.log(), 'maxConnections=128', 'the cap derives from the limit: half of 256');
      const first = await demoRunning(daemon);
      // Well past the cap; a stranger would keep this up for ever. Sampled until the connections are several times
      // the cap and the server has had many check-ins accepted while they held it: more than a whole timeout's worth.
      const pressure = press(300, 1500);
      const seen: StatusJson[] = [];
      const accepted = new Set<string>();
      let fullSince: number | null = null;
      let worstAge = 0;
      await waitFor(
        `${WANT_OPENED} idle connections and ${WANT_CHECKINS} check-ins accepted while they hold the cap`,
        async () => {
          if (fullSince === null && pressure.figures().opened >= 128) fullSince = Date.now();
          // This client's own idle keep-alive connection may be the oldest, and so the one to give way: ask again.
          const s = await statusOf(daemon, 'demo', 'tok').catch(() => statusOf(daemon, 'demo', 'tok'));
          seen.push(s);
          if (s.lastCheckinAt) {
            worstAge = Math.max(worstAge, Date.now() - Date.parse(s.lastCheckinAt));
            if (fullSince !== null && Date.parse(s.lastCheckinAt) > fullSince) accepted.add(s.lastCheckinAt);
          }
          return pressure.figures().opened >= WANT_OPENED && accepted.size >= WANT_CHECKINS;
        },
        30_000,
        // The sampling pace; each sample is one status request.
        200,
      );
      // No more: those still waiting in the listen backlog are accepted (and evicted) once the daemon gets to them.
      pressure.drop(0);
      await waitFor('the daemon down to its cap', () => pressure.figures().held <= 128, 15_000);
      const figures = pressure.figures();
      // Had check-ins gone unanswered for TimeoutSeconds, the server would have been killed as hung.
      for (const s of seen) {
        assert.is(
          s.pid,
          first.pid,
          `the same server runs throughout:\n${daemon.log().split('\n').slice(-40).join('\n')}`,
        );
        assert.ok(['server.running', 'server.awaiting-checkin'].includes(s.state), s.state);
      }
      const end = await statusOf(daemon, 'demo', 'tok');
      assert.is(end.restarts, 0, `never relaunched:\n${daemon.log().split('\n').slice(-40).join('\n')}`);
      assert.is(end.pid, first.pid);
      assert.ok(figures.held <= 128, `the daemon held at most its cap of them (${figures.held})`);
      const metrics = await metricsText(daemon);
      const dropped = (action: string, cap: string) =>
        Number(
          new RegExp(`watchdog_http_connections_dropped_total\\{action="${action}",cap="${cap}"\\} (\\d+)`).exec(
            metrics,
          )?.[1],
        );
      // Every connection comes from 127.0.0.1: the per-source cap (64, half of 128) is the one reached.
      const evicted = dropped('evicted', 'source') + dropped('evicted', 'total');
      assert.is(
        dropped('refused', 'source') + dropped('refused', 'total'),
        0,
        'nobody was refused: idle ones made room',
      );
      assert.ok(
        evicted >= figures.opened - 128,
        `idle connections were evicted for newcomers (${evicted} of ${figures.opened})`,
      );
      assert.not.match(daemon.log(), 'EMFILE', 'the daemon never ran out of descriptors');
      console.log(
        `  descriptor pressure: ${figures.opened} idle connections against a cap of 128 (limit ${LIMIT}); ` +
          `${evicted} evicted (per-source cap 64), none refused; ${accepted.size} check-ins seen accepted meanwhile, ` +
          `oldest seen ${worstAge} ms old (interval 300 ms, timeout ${TIMEOUT_S} s)`,
      );
    },
  ),
);

limited(
  'descriptors :: a relaunch blocked by EMFILE is retried and runs again once the descriptors are back, never failing',
  async () => {
    const hook = await startWebhookReceiver();
    try {
      await withLimitedDaemon(
        'wd-fds-b-',
        async (dir) =>
          testConfig({
            webhook: hook.url,
            extra: `  WebhookRetries: 12\n${NO_CAP}`,
            instances: [
              {
                port: await freePort(),
                runCommand: FIXTURE,
                timeoutSeconds: 30,
                extra: `      EnvironmentVariables:\n        EXIT_FILE: ${JSON.stringify(join(dir, 'crash-now'))}`,
              },
            ],
          }),
        async ({ dir, daemon: d, press }) => {
          const first = await demoRunning(d);
          const pressure = press(400, 2000);
          await pressure.outOfDescriptors();
          await writeFile(join(dir, 'crash-now'), 'crash\n');
          await waitFor(
            'a blocked relaunch in the log',
            () =>
              /cannot launch: the watchdog is out of file descriptors \(EMFILE\); retrying in/.test(d.log()) ||
              undefined,
            15_000,
          );
          // Blocked a few times while the pressure lasts: retried, never counted.
          await waitFor(
            'a second blocked relaunch',
            () =>
              (d.log().match(/cannot launch: the watchdog is out of file descriptors/g) ?? []).length >= 2 || undefined,
            15_000,
          );
          pressure.release();
          const back = await waitStatus(
            d,
            'demo',
            'tok',
            'running again on a new server',
            (s) => s.state === 'server.running' && s.pid !== null && s.pid !== first.pid,
            20_000,
          );
          assert.is(back.startupFailures, 0, 'a blocked launch is no startup failure');
          assert.not.match(d.log(), 'stopped.failing');
          assert.match(d.log(), /state restarting\.blocked/);
          const texts = () => hook.messages.map((m) => JSON.stringify(m.body));
          await waitFor(
            'both chat messages',
            () => texts().some((t) => t.includes('launched again')) || undefined,
            20_000,
          );
          const blocked = texts().filter((t) => t.includes('cannot launch'));
          assert.is(blocked.length, 1, `one message for the episode:\n${texts().join('\n')}`);
          assert.match(blocked[0] ?? '', 'out of file descriptors (EMFILE)');
          assert.is(texts().filter((t) => t.includes('launched again')).length, 1);
          // Each blocked launch also fails to open server.log; the daemon's log says so once for the episode,
          // and once that it is written again, not once per attempt.
          const launches = d.log().match(/cannot launch: the watchdog is out of file descriptors/g) ?? [];
          const failing = d.log().match(/cannot write \S+server\.log \(EMFILE\)/g) ?? [];
          assert.ok(launches.length >= 2, `blocked more than once (${launches.length})`);
          assert.is(failing.length, 1, `one server.log failure for ${launches.length} blocked launches:\n${d.log()}`);
          assert.is((d.log().match(/writing \S+server\.log again/g) ?? []).length, 1, 'and one line when it is back');
        },
      );
    } finally {
      await hook.close();
    }
  },
);

limited(
  'descriptors :: what the daemon first serves while out of descriptors still works once they are back (no failed import kept)',
  () =>
    withLimitedDaemon(
      'wd-fds-c-',
      async () =>
        testConfig({
          extra: NO_CAP,
          instances: [{ port: await freePort(), runCommand: FIXTURE, timeoutSeconds: 30 }],
        }),
      async ({ daemon: d, press }) => {
        // No request reaches the HTTP app before the pressure: its first ones come while descriptors are out.
        await waitFor('the server launched', () => /server launched/.test(d.log()) || undefined, 15_000);
        const pressure = press(400, 2000);
        await pressure.outOfDescriptors();
        // A few free descriptors: a request is accepted, and little else can be opened while it is served.
        pressure.drop(4);
        // Pacing only: a moment for those closes to reach the daemon. Nothing asserted depends on it (the answers
        // while descriptors are out may be anything; what is checked is what the daemon serves afterwards).
        await new Promise((r) => setTimeout(r, 100));
        const paths = ['/api/instances', '/metrics', '/openapi.json', '/instances/demo/status'];
        const auth = { authorization: basic('demo', 'tok') };
        // Whatever gets through while descriptors are out may fail; a few tries, each bounded.
        const during = await Promise.all(
          paths.map((p) =>
            fetch(`${d.url}${p}`, { headers: auth, signal: AbortSignal.timeout(3000) }).then(
              (r) => r.status,
              () => 0,
            ),
          ),
        );
        pressure.release();
        for (const p of paths) {
          const res = await waitFor(
            `${p} answering`,
            () =>
              fetch(`${d.url}${p}`, { headers: auth, signal: AbortSignal.timeout(3000) }).then(
                (r) => (r.status === 200 ? r : undefined),
                () => undefined,
              ),
            10_000,
          );
          assert.is(res.status, 200, p);
        }
        console.log(`  under descriptor pressure the first requests answered ${during.join(', ')}; after it, all 200`);
      },
    ),
);

test.run();
