import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import { logRejectedCheckins } from '../../src/daemon/checkin-log.ts';
import { recordingLogger } from '../_support/recording-logger.ts';

const test = suite('rejected check-in log');

test('checkin-log :: one line per instance per window, naming the reason and the remote; never the secret', () => {
  const bus = createBus();
  const log = recordingLogger();
  const stop = logRejectedCheckins(bus, log, 60_000, () => true);
  const reject = (key: string, reason: string, at: number) =>
    bus.emit('checkin:rejected', { key, reason, remote: '127.0.0.1', at });
  reject('alpha', 'stale or wrong token', 1_000);
  for (let i = 0; i < 50; i++) reject('alpha', 'stale or wrong token', 1_000 + i * 1_000); // a server pinging every second
  reject('beta', 'stale or wrong token', 2_000);
  reject('alpha', 'malformed header: missing or not Basic', 61_000); // the next window
  assert.equal(
    log.lines.map((l) => [l.level, l.msg, l.fields?.key, l.fields?.remote]),
    [
      ['warn', 'check-in rejected: stale or wrong token', 'alpha', '127.0.0.1'],
      ['warn', 'check-in rejected: stale or wrong token', 'beta', '127.0.0.1'],
      ['warn', 'check-in rejected: malformed header: missing or not Basic', 'alpha', '127.0.0.1'],
    ],
  );
  stop();
  reject('alpha', 'stale or wrong token', 200_000);
  assert.is(log.lines.length, 3, 'unsubscribed');
});

test('checkin-log :: keys that are not configured share one window, whatever a client invents', () => {
  const bus = createBus();
  const log = recordingLogger();
  logRejectedCheckins(bus, log, 60_000, (key) => key === 'alpha');
  for (let i = 0; i < 500; i++)
    bus.emit('checkin:rejected', {
      key: `made-up-${i}`,
      reason: 'unknown instance',
      remote: '127.0.0.1',
      at: 1_000 + i,
    });
  bus.emit('checkin:rejected', { key: 'alpha', reason: 'stale or wrong token', remote: '127.0.0.1', at: 2_000 });
  bus.emit('checkin:rejected', {
    key: 'made-up-x',
    reason: 'malformed header: missing or not Basic',
    remote: '127.0.0.1',
    at: 70_000,
  });
  assert.equal(
    log.lines.map((l) => [l.msg, l.fields?.key]),
    [
      ['check-in rejected: unknown instance', 'made-up-0'],
      ['check-in rejected: stale or wrong token', 'alpha'],
      ['check-in rejected: malformed header: missing or not Basic', 'made-up-x'],
    ],
  );
});

test('checkin-log :: a window of 0 logs every rejection', () => {
  const bus = createBus();
  const log = recordingLogger();
  logRejectedCheckins(bus, log, 0, () => true);
  for (let i = 0; i < 3; i++)
    bus.emit('checkin:rejected', { key: 'alpha', reason: 'stale or wrong token', remote: undefined, at: 5 });
  assert.is(log.lines.length, 3);
  assert.is(log.lines[0]?.fields?.remote, '');
});

test.run();
