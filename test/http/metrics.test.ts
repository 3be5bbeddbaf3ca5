/**
 * `GET /metrics` (src/http/info-routes.ts, src/metrics/collector.ts), read back with an independent parser
 * (parse-prometheus-text-format), plus the checks that lenient parser leaves out (types, help, numeric values).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type Bus, createBus } from '../../src/bus.ts';
import { statePaths } from '../../src/chart/graph.ts';
import { createApp } from '../../src/http/app.ts';
import { createMetricsCollector } from '../../src/metrics/collector.ts';
import type { InstanceStatus } from '../../src/supervisor/status.ts';
import { fromLoopback, type MemoryInstance, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';
import { parseExposition, sample } from './_support/metrics.ts';

function setup(alpha: MemoryInstance = memoryInstance('alpha', { apiToken: 't' })) {
  const bus = createBus();
  const app = fromLoopback(
    createApp({
      registry: memoryRegistry(alpha),
      bus,
      log: recordingLogger(),
      version: '1.2.3',
    }),
  );
  const scrape = async () => {
    const res = await app.request('/metrics');
    assert.is(res.status, 200);
    return parseExposition(await res.text());
  };
  return { bus, alpha, app, scrape };
}

const expo = suite('metrics :: exposition');

expo('metrics :: text format 0.0.4, every family typed and described, and the names the issue asks for', async () => {
  const { app } = setup();
  const res = await app.request('/metrics');
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const families = parseExposition(await res.text());
  const names = families.map((f) => f.name);
  for (const n of [
    'watchdog_instance_state',
    'watchdog_instance_seconds_since_checkin',
    'watchdog_instance_restarts_total',
    'watchdog_instance_startup_failures',
    'watchdog_update_duration_seconds',
    'watchdog_update_bytes',
    'watchdog_instance_resident_memory_bytes',
    'watchdog_instance_cpu_seconds_total',
    'watchdog_instance_players',
    'watchdog_event_loop_lag_seconds',
    'watchdog_alerts_total',
  ])
    assert.ok(names.includes(n), n);
  assert.is(sample(families, 'watchdog_build_info', { version: '1.2.3' }), 1);
  assert.ok((sample(families, 'watchdog_event_loop_lag_max_seconds') ?? -1) >= 0);
});

expo('metrics :: state is one-hot over every state path of the chart, and moves with the instance', async () => {
  const { alpha, scrape } = setup();
  const check = async (expected: string) => {
    const f = (await scrape()).find((x) => x.name === 'watchdog_instance_state');
    const series = f?.metrics.filter((m) => m.labels?.instance === 'alpha') ?? [];
    assert.equal(series.map((m) => m.labels?.state).sort(), [...statePaths()].sort());
    assert.equal(
      series.filter((m) => m.value === '1').map((m) => m.labels?.state),
      [expected],
    );
  };
  await check('server.running');
  alpha.state = 'stopped.idle';
  await check('stopped.idle');
  alpha.state = 'restarting.backoff';
  await check('restarting.backoff');
});

expo('metrics :: restart, alert and update counters start at zero and count bus facts', async () => {
  const { bus, scrape } = setup();
  let f = await scrape();
  for (const reason of ['crash', 'hang', 'request', 'update', 'startup-failure', 'exit']) {
    assert.is(sample(f, 'watchdog_instance_restarts_total', { instance: 'alpha', reason }), 0, reason);
  }
  assert.is(sample(f, 'watchdog_alerts_total', { instance: 'alpha', kind: 'crash-loop' }), 0);
  emit(bus);
  f = await scrape();
  assert.is(sample(f, 'watchdog_instance_restarts_total', { instance: 'alpha', reason: 'request' }), 2);
  assert.is(sample(f, 'watchdog_instance_restarts_total', { instance: 'alpha', reason: 'crash' }), 1);
  assert.is(sample(f, 'watchdog_alerts_total', { instance: 'alpha', kind: 'hang' }), 1);
  assert.is(sample(f, 'watchdog_updates_total', { instance: 'alpha', result: 'done' }), 1);
  assert.is(sample(f, 'watchdog_updates_total', { instance: 'alpha', result: 'failed' }), 1);
  assert.is(sample(f, 'watchdog_update_duration_seconds', { instance: 'alpha' }), 2.5);
  assert.is(sample(f, 'watchdog_update_bytes', { instance: 'alpha' }), 4096);
});

expo('metrics :: the last backup starts from the snapshot found on disk; a newer one taken replaces it', async () => {
  const { bus, scrape } = setup();
  const found = Date.parse('2026-11-01T10:00:00Z');
  bus.emit('instance:backup-found', { key: 'alpha', id: 'old', archiveBytes: 100, at: found });
  let f = await scrape();
  assert.is(sample(f, 'watchdog_backup_last_success_timestamp_seconds', { instance: 'alpha' }), found / 1000);
  assert.is(sample(f, 'watchdog_backup_last_size_bytes', { instance: 'alpha' }), 100);
  assert.is(sample(f, 'watchdog_backups_total', { instance: 'alpha', result: 'ok' }), 0);
  const taken = { key: 'alpha', ok: true, kind: 'manual', id: 'new', bytes: 9, error: null, removed: [] };
  bus.emit('instance:backup', { ...taken, archiveBytes: 200, at: found + 60_000 });
  // A late find of an older snapshot does not hide the newer one.
  bus.emit('instance:backup-found', { key: 'alpha', id: 'old', archiveBytes: 100, at: found });
  f = await scrape();
  assert.is(sample(f, 'watchdog_backup_last_success_timestamp_seconds', { instance: 'alpha' }), found / 1000 + 60);
  assert.is(sample(f, 'watchdog_backup_last_size_bytes', { instance: 'alpha' }), 200);
  assert.is(sample(f, 'watchdog_backups_total', { instance: 'alpha', result: 'ok' }), 1);
});

expo("metrics :: a removed instance's last successes go with it and come back with it; its counts stay", async () => {
  const bus = createBus();
  const alpha = memoryInstance('alpha');
  let instances = [alpha];
  const registry = { get: (key: string) => instances.find((i) => i.key === key), list: () => instances };
  const metrics = createMetricsCollector({ bus, registry });
  try {
    const at = Date.parse('2026-11-01T10:00:00Z');
    const found = { key: 'alpha', id: 'old', archiveBytes: 100, at };
    bus.emit('instance:backup-found', found);
    bus.emit('instance:update-check', { key: 'alpha', ok: true, available: false, error: null, at });
    bus.emit('instance:restart', { key: 'alpha', reason: 'crash', at });
    let f = parseExposition(await metrics.metrics());
    assert.is(sample(f, 'watchdog_backup_last_success_timestamp_seconds', { instance: 'alpha' }), at / 1000);
    instances = [];
    f = parseExposition(await metrics.metrics());
    for (const name of [
      'watchdog_backup_last_success_timestamp_seconds',
      'watchdog_backup_last_size_bytes',
      'watchdog_update_check_last_success_timestamp_seconds',
    ])
      assert.is(sample(f, name, { instance: 'alpha' }), undefined, name);
    assert.is(sample(f, 'watchdog_instance_restarts_total', { instance: 'alpha', reason: 'crash' }), 1);
    // A reload adds it back: its backups are scanned again.
    instances = [alpha];
    bus.emit('instance:backup-found', found);
    f = parseExposition(await metrics.metrics());
    assert.is(sample(f, 'watchdog_backup_last_size_bytes', { instance: 'alpha' }), 100);
  } finally {
    metrics.stop();
  }
});

function emit(bus: Bus) {
  const at = Date.now();
  bus.emit('instance:restart', { key: 'alpha', reason: 'request', at });
  bus.emit('instance:restart', { key: 'alpha', reason: 'request', at });
  bus.emit('instance:restart', { key: 'alpha', reason: 'crash', at });
  bus.emit('instance:alert', { key: 'alpha', kind: 'hang', message: 'hung', at });
  bus.emit('instance:update', { key: 'alpha', phase: 'check', at });
  bus.emit('instance:update', { key: 'alpha', phase: 'download', bytes: 1024, total: 4096, at });
  bus.emit('instance:update', { key: 'alpha', phase: 'verify', bytes: 4096, total: 4096, at });
  // The build was staged by an earlier check; the install's own check must not lose its size.
  bus.emit('instance:update', { key: 'alpha', phase: 'check', at });
  bus.emit('instance:update', { key: 'alpha', phase: 'done', revision: 'r2', durationMs: 2500, at });
  bus.emit('instance:update', { key: 'alpha', phase: 'check', at });
  bus.emit('instance:update', { key: 'alpha', phase: 'failed', error: 'network down', at });
}

expo(
  'metrics :: check-in age, startup failures and uptime follow the status; absent series when there is nothing to show',
  async () => {
    const alpha = memoryInstance('alpha');
    let status: InstanceStatus = {
      ...alpha.status(),
      // The wall-clock time says an hour ago (a step of the clock): the gauge follows the monotonic age.
      lastCheckinAt: new Date(Date.now() - 3_600_000).toISOString(),
      secondsSinceCheckin: 5,
      startupFailures: 2,
      uptimeSeconds: 40,
    };
    alpha.status = () => status;
    const { scrape } = setup(alpha);
    let f = await scrape();
    const age = sample(f, 'watchdog_instance_seconds_since_checkin', { instance: 'alpha' }) ?? 0;
    assert.is(age, 5, 'the monotonic age, not the wall-clock one');
    assert.is(sample(f, 'watchdog_instance_startup_failures', { instance: 'alpha' }), 2);
    assert.is(sample(f, 'watchdog_instance_uptime_seconds', { instance: 'alpha' }), 40);
    status = { ...status, lastCheckinAt: null, secondsSinceCheckin: null, uptimeSeconds: null, pid: null };
    f = await scrape();
    assert.is(sample(f, 'watchdog_instance_seconds_since_checkin', { instance: 'alpha' }), undefined);
    assert.is(sample(f, 'watchdog_instance_uptime_seconds', { instance: 'alpha' }), undefined);
    assert.is(sample(f, 'watchdog_instance_resident_memory_bytes', { instance: 'alpha' }), undefined);
  },
);

expo('metrics :: label values with quotes, backslashes and newlines survive the round trip', async () => {
  const alpha = memoryInstance('alpha');
  const name = 'Quote " back\\slash\nnew line';
  const base = alpha.status();
  alpha.status = () => ({ ...base, name, revision: 'r"1' });
  const { scrape } = setup(alpha);
  const f = await scrape();
  const info = f.find((x) => x.name === 'watchdog_instance_info')?.metrics[0]?.labels;
  assert.equal(info, { instance: 'alpha', name, revision: 'r"1' });
});

expo("metrics :: a server's sampled CPU time, memory and players; gone with the sample", async () => {
  const alpha = memoryInstance('alpha');
  const base = alpha.status();
  const resources = {
    cpuPercent: 12.5,
    cpuSeconds: 3.25,
    rssBytes: 123_456_789,
    processes: 2,
    at: '2026-01-01T00:00:00Z',
  };
  let status: InstanceStatus = { ...base, pid: 42, resources, players: 7 };
  alpha.status = () => status;
  const { scrape } = setup(alpha);
  let f = await scrape();
  assert.is(sample(f, 'watchdog_instance_cpu_seconds_total', { instance: 'alpha' }), 3.25);
  assert.is(sample(f, 'watchdog_instance_resident_memory_bytes', { instance: 'alpha' }), 123_456_789);
  assert.is(sample(f, 'watchdog_instance_players', { instance: 'alpha' }), 7);
  // The counter follows the sample up (it is set anew at each scrape, not added to).
  status = { ...status, resources: { ...resources, cpuSeconds: 4 } };
  assert.is(sample(await scrape(), 'watchdog_instance_cpu_seconds_total', { instance: 'alpha' }), 4);
  status = { ...status, pid: null, resources: null, players: null };
  f = await scrape();
  for (const name of [
    'watchdog_instance_cpu_seconds_total',
    'watchdog_instance_resident_memory_bytes',
    'watchdog_instance_players',
  ])
    assert.is(sample(f, name, { instance: 'alpha' }), undefined, name);
});

expo('metrics :: a collector passed in is used, and stop() lets go of the bus', async () => {
  const bus = createBus();
  const registry = memoryRegistry(memoryInstance('alpha'));
  const metrics = createMetricsCollector({ bus, registry, version: 'x' });
  const app = fromLoopback(createApp({ registry, bus, log: recordingLogger(), version: '1', metrics }));
  bus.emit('instance:restart', { key: 'alpha', reason: 'hang', at: 1 });
  const text = await (await app.request('/metrics')).text();
  assert.is(sample(parseExposition(text), 'watchdog_build_info', { version: 'x' }), 1);
  metrics.stop();
  bus.emit('instance:restart', { key: 'alpha', reason: 'hang', at: 2 });
  assert.is(
    sample(parseExposition(await metrics.metrics()), 'watchdog_instance_restarts_total', {
      instance: 'alpha',
      reason: 'hang',
    }),
    1,
  );
});

expo(
  'metrics :: event-loop lag: nothing measured before the first scrape, then the time the loop was held since the last',
  async () => {
    const metrics = createMetricsCollector({ bus: createBus(), registry: memoryRegistry(memoryInstance('alpha')) });
    const lagMax = async () => sample(parseExposition(await metrics.metrics()), 'watchdog_event_loop_lag_max_seconds');
    try {
      // Not a wait for an event: a loop turn. The monitor samples on a 10 ms timer; a timer armed for 30 ms after a
      // hold is due after the monitor's, so it runs after it in the same timers phase and the hold has been sampled.
      const turn = () => new Promise((r) => setTimeout(r, 30));
      const hold = (ms: number) => {
        const until = performance.now() + ms;
        while (performance.now() < until);
      };
      hold(80);
      assert.is(await lagMax(), 0, 'the monitor starts with the first scrape');
      await turn();
      hold(80);
      await turn();
      const held = (await lagMax()) ?? 0;
      // The upper bound only tells seconds from milliseconds (80 ms is 0.08, not 80): a loaded machine adds lag.
      assert.ok(held >= 0.05 && held < 30, `an 80 ms hold is seen: ${held} s`);
    } finally {
      metrics.stop();
    }
  },
);

expo('metrics :: other methods → 405', async () => {
  const { app } = setup();
  assert.is((await app.request('/metrics', { method: 'POST' })).status, 405);
});

expo('metrics :: connections: open now, and refused or evicted by cap, from the guard at each scrape', async () => {
  const figures = { open: 7, refused: { total: 1, source: 2 }, evicted: { total: 3, source: 40 } };
  const metrics = createMetricsCollector({
    bus: createBus(),
    registry: memoryRegistry(memoryInstance('alpha')),
    connections: () => figures,
  });
  try {
    let families = parseExposition(await metrics.metrics());
    assert.is(sample(families, 'watchdog_http_connections'), 7);
    const dropped = (action: string, cap: string) =>
      sample(families, 'watchdog_http_connections_dropped_total', { action, cap });
    assert.equal(
      [
        dropped('refused', 'total'),
        dropped('refused', 'source'),
        dropped('evicted', 'total'),
        dropped('evicted', 'source'),
      ],
      [1, 2, 3, 40],
    );
    figures.evicted.source = 45;
    figures.open = 2;
    families = parseExposition(await metrics.metrics());
    assert.is(dropped('evicted', 'source'), 45, 'the counter follows the guard, not added twice');
    assert.is(sample(families, 'watchdog_http_connections'), 2);
  } finally {
    metrics.stop();
  }
});

expo.run();
