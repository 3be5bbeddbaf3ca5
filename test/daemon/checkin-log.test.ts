import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import { logRejectedCheckins } from '../../src/daemon/checkin-log.ts';
import { recordingLogger } from '../store/recording-logger.ts';

const test = suite('rejected check-in log');

test('checkin-log :: one line per instance per window, naming the reason and the remote; never the secret', () => {
  const bus = createBus();
  const log = recordingLogger();
  const stop = logRejectedCheckins(bus, log, 60_000);
  const reject = (key: string, reason: string, at: number) => bus.emit('checkin:rejected', { key, reason, remote: '127.0.0.1', at });
  reject('alpha', 'stale or wrong token', 1_000);
  for (let i = 0; i < 50; i++) reject('alpha', 'stale or wrong token', 1_000 + i * 1_000); // a server pinging every second
  reject('beta', 'unknown instance', 2_000);
  reject('alpha', 'malformed header: missing or not Basic', 61_000); // the next window
  assert.equal(log.lines.map((l) => [l.level, l.msg, l.fields?.key, l.fields?.remote]), [
    ['warn', 'check-in rejected: stale or wrong token', 'alpha', '127.0.0.1'],
    ['warn', 'check-in rejected: unknown instance', 'beta', '127.0.0.1'],
    ['warn', 'check-in rejected: malformed header: missing or not Basic', 'alpha', '127.0.0.1'],
  ]);
  stop();
  reject('gamma', 'unknown instance', 200_000);
  assert.is(log.lines.length, 3, 'unsubscribed');
});

test('checkin-log :: a window of 0 logs every rejection', () => {
  const bus = createBus();
  const log = recordingLogger();
  logRejectedCheckins(bus, log, 0);
  for (let i = 0; i < 3; i++) bus.emit('checkin:rejected', { key: 'alpha', reason: 'stale or wrong token', remote: undefined, at: 5 });
  assert.is(log.lines.length, 3);
  assert.is(log.lines[0]?.fields?.remote, '');
});

test.run();
