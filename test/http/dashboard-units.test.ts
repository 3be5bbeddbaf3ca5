/**
 * One sample, one reading: the dashboard card and `watchdog status` write a server's CPU and memory alike (decimal
 * units, the same rounding), and the browser's copy of formatBytes agrees with the daemon's for every size.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { resourceCells } from '../../src/cli/client/status-table.ts';
import { cardFields } from '../../src/http/dashboard/assets/card-view.js';
import { formatBytes as shownInBrowser } from '../../src/http/dashboard/assets/shared.js';
import { formatBytes } from '../../src/store/disk-space.ts';
import type { InstanceStatus } from '../../src/supervisor/status.ts';

const test = suite('dashboard units');
const row: InstanceStatus = {
  key: 'demo',
  name: 'demo',
  state: 'server.running',
  pid: 42,
  revision: '1',
  lastCheckinAt: null,
  startedAt: null,
  startupFailures: 0,
  restarts: 0,
  stopRequested: false,
  uptimeSeconds: null,
  updatePending: false,
  lastExit: null,
};

test('dashboard units :: the card and the status table read one sample alike', () => {
  const samples: [cpu: number, rss: number][] = [
    [0, 999],
    [0.04, 97_200_000],
    [0.4, 124_000_000],
    [9.96, 1_049_000_000],
    [12.4, 2_100_000_000],
    [231.6, 45_600_000],
  ];
  for (const [cpuPercent, rssBytes] of samples) {
    const status = {
      ...row,
      resources: { cpuPercent, cpuSeconds: 1, rssBytes, processes: 1, at: new Date().toISOString() },
    };
    const card = cardFields(status, Date.now());
    const [cpu, mem] = resourceCells(status);
    assert.is(card.memory, mem, `${rssBytes} bytes`);
    assert.is(card.cpu, cpu, `${cpuPercent} %`);
  }
});

test('dashboard units :: the browser and the daemon write every size in the same decimal units', () => {
  for (let bytes = 1; bytes < 5e15; bytes = Math.ceil(bytes * 1.37)) {
    assert.is(shownInBrowser(bytes), formatBytes(bytes), `${bytes} bytes`);
  }
  assert.is(formatBytes(97_200_000), '97 MB', 'never MiB');
});

test.run();
