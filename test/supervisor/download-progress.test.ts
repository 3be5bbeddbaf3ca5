/** A running download as the status shows it (src/supervisor/instance-chart.ts) and as the CLI prints it. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BusEvents } from '../../src/bus.ts';
import { downloadLine } from '../../src/cli/client/follow.ts';
import { createDownloadProgress } from '../../src/supervisor/instance-chart.ts';

const test = suite('supervisor :: download progress');
/** The monotonic clock the rate is measured on; each event moves it to its own time, as if both clocks agreed. */
let clock = 0;
const ev = (phase: BusEvents['instance:update']['phase'], at: number, bytes?: number, total?: number | null) => {
  clock = at;
  return { key: 'a', phase, at, bytes, total } as BusEvents['instance:update'];
};

test('download-progress :: bytes, total, the average rate since the start, time left; a new download starts afresh; other phases end it', () => {
  const p = createDownloadProgress(() => clock);
  assert.is(p.status(), null);
  p.seen(ev('check', 0));
  p.seen(ev('download', 1000, 0, 10_000_000));
  assert.equal(p.status(), {
    bytes: 0,
    total: 10_000_000,
    bytesPerSecond: null,
    etaSeconds: null,
    since: new Date(1000).toISOString(),
  });
  p.seen(ev('download', 3000, 4_000_000, 10_000_000));
  assert.equal(p.status(), {
    bytes: 4_000_000,
    total: 10_000_000,
    bytesPerSecond: 2_000_000,
    etaSeconds: 3,
    since: new Date(1000).toISOString(),
  });
  assert.is(
    downloadLine({ key: 'a', state: 'updating', download: p.status() }),
    'downloading 4 MB of 10 MB, 2 MB/s, about 3s left',
  );
  p.seen(ev('download', 5000, 100, null));
  assert.equal(
    [p.status()?.since, p.status()?.total, p.status()?.etaSeconds],
    [new Date(5000).toISOString(), null, null],
  );
  p.seen(ev('verify', 6000, 10_000_000, 10_000_000));
  assert.is(p.status(), null);
  assert.is(downloadLine({ key: 'a', state: 'updating', download: null }), null);
});

test('download-progress :: the rate follows the monotonic clock: a wall-clock step back neither stops nor skews it', () => {
  let mono = 0;
  const p = createDownloadProgress(() => mono);
  const at = (wall: number, bytes: number) =>
    ({ key: 'a', phase: 'download', at: wall, bytes, total: 8_000_000 }) as BusEvents['instance:update'];
  p.seen(at(10_000_000, 0));
  mono = 2000;
  // The wall clock stepped back an hour between the two events.
  p.seen(at(10_000_000 - 3_600_000 + 2000, 4_000_000));
  assert.equal(p.status(), {
    bytes: 4_000_000,
    total: 8_000_000,
    bytesPerSecond: 2_000_000,
    etaSeconds: 2,
    since: new Date(10_000_000).toISOString(),
  });
});

test.run();
