/** `/metrics` and `/api/instances` of the real daemon, following a demo server through restart and stop. */
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { daemonSuite, type RunningDaemon, type StatusJson } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { type Family, parseExposition, sample } from '../../http/_support/metrics.ts';

const TOKEN = 'tok';
const test = daemonSuite('e2e :: metrics follow the instance', {
  config: async () =>
    testConfig({ instances: [{ key: 'demo', port: await freePort() }], extra: '  ResourceSampleSeconds: 0.3' }),
});

async function scrape(d: RunningDaemon): Promise<Family[]> {
  const res = await fetch(`${d.url}/metrics`);
  assert.is(res.status, 200);
  return parseExposition(await res.text());
}
const activeState = (f: Family[]) =>
  f
    .find((x) => x.name === 'watchdog_instance_state')
    ?.metrics.filter((m) => m.labels?.instance === 'demo' && m.value === '1')
    .map((m) => m.labels?.state);
const restarts = (f: Family[], reason: string) =>
  sample(f, 'watchdog_instance_restarts_total', { instance: 'demo', reason });
const when = (what: string, check: (f: Family[]) => boolean, d: RunningDaemon) =>
  waitFor(
    what,
    async () => {
      const f = await scrape(d);
      return check(f) ? f : undefined;
    },
    15_000,
    100,
  );

test("metrics :: running: one-hot state, a recent check-in, the server's memory and CPU time", async ({ daemon }) => {
  const d = daemon!;
  const f = await when(
    'running with a check-in',
    (f) =>
      activeState(f)?.join() === 'server.running' &&
      sample(f, 'watchdog_instance_seconds_since_checkin', { instance: 'demo' }) !== undefined &&
      // The daemon samples the server's CPU time every Timing.ResourceSampleSeconds, from its launch on.
      (sample(f, 'watchdog_instance_cpu_seconds_total', { instance: 'demo' }) ?? 0) > 0,
    d,
  );
  assert.ok((sample(f, 'watchdog_instance_seconds_since_checkin', { instance: 'demo' }) ?? 99) < 5);
  assert.ok(
    (sample(f, 'watchdog_instance_resident_memory_bytes', { instance: 'demo' }) ?? 0) > 10 * 1024 * 1024,
    'a node process has more than 10 MB resident',
  );
  assert.ok((sample(f, 'watchdog_instance_cpu_seconds_total', { instance: 'demo' }) ?? 0) > 0);
  assert.is(sample(f, 'watchdog_instance_startup_failures', { instance: 'demo' }), 0);
  assert.is(restarts(f, 'request'), 0);
  // The dashboard's list and the instance's own status are the same JSON; a check-in or a resource sample between
  // the two reads changes their timestamps, so they are compared on one pair of reads taken with nothing between.
  const same = await waitFor(
    'the dashboard list and the status to agree',
    async () => {
      const api = (await (await fetch(`${d.url}/api/instances`)).json()) as StatusJson[];
      const own = await d.status('demo', TOKEN);
      return api.length === 1 && JSON.stringify(api[0]) === JSON.stringify(own) ? own : undefined;
    },
    5_000,
  );
  assert.is(same.state, 'server.running');
});

test('metrics :: a requested restart counts once under reason="request", and the state comes back to running', async ({
  daemon,
}) => {
  const d = daemon!;
  const before = await d.status('demo', TOKEN);
  assert.is(await d.control('demo', TOKEN, 'restart'), 200);
  const f = await when(
    'restart counted and running again',
    (f) => restarts(f, 'request') === 1 && activeState(f)?.join() === 'server.running',
    d,
  );
  assert.is(restarts(f, 'crash'), 0);
  const after = await d.status('demo', TOKEN);
  assert.is.not(after.pid, before.pid);
  assert.ok((sample(f, 'watchdog_instance_uptime_seconds', { instance: 'demo' }) ?? 99) < 10, 'uptime starts over');
});

test('metrics :: a stop: stopped.idle, no process series, the stop alert counted', async ({ daemon }) => {
  const d = daemon!;
  assert.is(await d.control('demo', TOKEN, 'stop'), 200);
  const f = await when('stopped.idle', (f) => activeState(f)?.join() === 'stopped.idle', d);
  assert.is(sample(f, 'watchdog_instance_resident_memory_bytes', { instance: 'demo' }), undefined);
  assert.is(sample(f, 'watchdog_instance_cpu_seconds_total', { instance: 'demo' }), undefined);
  assert.is(sample(f, 'watchdog_alerts_total', { instance: 'demo', kind: 'stopped' }), 1);
  assert.is(restarts(f, 'request'), 1, 'a stop is not a restart');
});

test.run();
