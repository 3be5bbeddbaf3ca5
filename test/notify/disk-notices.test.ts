import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { BusEvents } from '../../src/bus.ts';
import { noticeFromDisk } from '../../src/notify/notices.ts';
import { embedOf, payloadOf } from '../../src/notify/payload.ts';
import { routesFor, routesFrom, targetIdentity } from '../../src/notify/routes.ts';

const low: BusEvents['daemon:disk-low'] = {
  holds: 'instances',
  path: '/data/instances',
  mount: '/data',
  freeBytes: 120_000_000,
  totalBytes: 10_000_000_000,
  thresholdBytes: 500_000_000,
  low: true,
  error: null,
  message: 'instances on /data: 120 MB free of 10 GB (1.2 %), below the 500 MB threshold',
  at: Date.UTC(2026, 10, 27, 3, 0, 0),
};

/** The content of a Text payload. */
const text = (p: ReturnType<typeof payloadOf>) => ('content' in p ? p.content : '');

const s = suite('notify :: disk notices');

s('disk :: one line with the figures, each way', () => {
  assert.is(
    text(payloadOf(noticeFromDisk(low, false), 'Text')),
    'Disk space is low: instances on /data: 120 MB free of 10 GB (1.2 %), below the 500 MB threshold.',
  );
  const back = {
    ...low,
    low: false,
    message: 'instances on /data: 3 GB free of 10 GB (30 %), above the 500 MB threshold',
  };
  assert.match(text(payloadOf(noticeFromDisk(back, true), 'Text')), /^Disk space is back: instances on \/data/);
});

s('disk :: the embed names no instance', () => {
  const e = embedOf(noticeFromDisk(low, false));
  assert.is(e.title, 'Disk space low');
  assert.equal(
    e.fields.map((f) => f.name),
    ['Folder'],
  );
});

s('disk :: every route wanting the kind gets it, whatever instances it lists', () => {
  const routes = routesFrom({
    Format: 'Text',
    Routes: [
      { Webhook: 'https://chat.example/a', Events: ['disk'], Instances: ['beta'] },
      { Webhook: 'https://chat.example/b', Events: ['crash'] },
      { Webhook: 'https://chat.example/c', Events: ['crash', 'disk'] },
    ],
  });
  assert.equal(
    routesFor(routes, noticeFromDisk(low, false)).map((r) => targetIdentity(r.target)),
    ['https://chat.example/a', 'https://chat.example/c'],
  );
  // An instance's own notice still keeps to the instances a route lists.
  const crash = { key: 'alpha', kind: 'crash' as const, message: 'x', at: 0 };
  assert.equal(
    routesFor(routes, crash).map((r) => targetIdentity(r.target)),
    ['https://chat.example/b', 'https://chat.example/c'],
  );
});

s.run();
