/**
 * Resource use at a glance: the real daemon samples a running demo server's process tree and its
 * `/status` players, and shows them in the status JSON, the `watchdog status` table and `/metrics`; a stopped
 * instance shows none.
 */
import * as assert from 'uvu/assert';
import type { ResourceStatus } from '../../src/supervisor/status.ts';
import { runMain } from '../_support/cli.ts';
import { testConfig } from '../_support/config.ts';
import { daemonSuite, type RunningDaemon, waitState } from '../_support/daemon.ts';
import { udpPlayer } from '../_support/demo.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { parseExposition, sample } from '../http/_support/metrics.ts';

const TOKEN = 'tok';
type Status = {
  state: string;
  pid: number | null;
  startedAt: string | null;
  resources: ResourceStatus | null;
  players: number | null;
};

const test = daemonSuite<{ port: number }>('e2e :: CPU, memory and players of a running server', {
  prefix: 'wd-res-',
  ctx: { port: 0 },
  async config(ctx) {
    ctx.port = await freePort();
    return testConfig({ instances: [{ key: 'demo', port: ctx.port }], extra: '  ResourceSampleSeconds: 0.3' });
  },
});

const status = async (d: RunningDaemon) => (await d.status('demo', TOKEN)) as unknown as Status;

test('resources :: status JSON, table and /metrics: CPU, the tree memory and the players the demo reports', async (ctx) => {
  const d = ctx.daemon!;
  const running = await waitState(d, 'demo', TOKEN, 'server.running');
  const player = await udpPlayer(ctx.port);
  try {
    assert.is(await player.send('join alice'), 'welcome alice');
    const s = await waitFor('a sample with one player', async () => {
      const s = await status(d);
      return s.players === 1 && s.resources !== null ? s : undefined;
    });
    assert.is(s.pid, running.pid);
    const r = s.resources!;
    assert.ok(r.cpuPercent >= 0 && Number.isFinite(r.cpuPercent), `cpu ${r.cpuPercent}`);
    assert.ok(r.cpuSeconds > 0, `the server has used some CPU time: ${r.cpuSeconds}`);
    assert.ok(r.rssBytes > 10 * 1024 * 1024 && r.rssBytes < 4 * 1024 ** 3, `a node server's memory: ${r.rssBytes}`);
    assert.ok(r.processes >= 1, String(r.processes));
    // Sampled during this run of the server: not before it started, not after the status was read.
    const sampledAt = Date.parse(r.at);
    assert.ok(sampledAt >= Date.parse(s.startedAt!) && sampledAt <= Date.now(), `${r.at} (started ${s.startedAt})`);

    const table = await runMain(['status', 'demo', '--url', d.url, '--token', TOKEN], { cwd: ctx.dir });
    assert.is(table.code, 0, table.stderr);
    const [header, row] = table.stdout.split('\n');
    const col = (name: string) => {
      const at = header!.indexOf(name);
      return row!.slice(at).split(/ {2,}/)[0];
    };
    assert.match(col('CPU') ?? '', /^\d+(\.\d)?%$/);
    assert.match(col('MEM') ?? '', /^\d+(\.\d)? (MB|GB)$/);
    assert.is(col('PLAYERS'), '1');

    const f = parseExposition(await (await fetch(`${d.url}/metrics`)).text());
    assert.is(sample(f, 'watchdog_instance_players', { instance: 'demo' }), 1);
    assert.ok((sample(f, 'watchdog_instance_resident_memory_bytes', { instance: 'demo' }) ?? 0) > 10 * 1024 * 1024);
    assert.ok((sample(f, 'watchdog_instance_cpu_seconds_total', { instance: 'demo' }) ?? 0) > 0);

    // The player leaves: the next samples say 0.
    assert.is(await player.send('leave'), 'bye');
    await waitFor('0 players', async () => ((await status(d)).players === 0 ? true : undefined));
  } finally {
    await player.close();
  }
});

test('resources :: stopped: no resources, no players, and no such series in /metrics', async (ctx) => {
  const d = ctx.daemon!;
  assert.is(await d.control('demo', TOKEN, 'stop'), 200);
  await waitState(d, 'demo', TOKEN, 'stopped.idle');
  const s = await status(d);
  assert.is(s.resources, null);
  assert.is(s.players, null);
  const f = parseExposition(await (await fetch(`${d.url}/metrics`)).text());
  assert.is(sample(f, 'watchdog_instance_players', { instance: 'demo' }), undefined);
  assert.is(sample(f, 'watchdog_instance_resident_memory_bytes', { instance: 'demo' }), undefined);
});

test.run();
