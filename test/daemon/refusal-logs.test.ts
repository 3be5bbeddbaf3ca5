import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import { logRefusedRequests, logRejectedCheckins } from '../../src/daemon/refusal-logs.ts';
import { recordingLogger } from '../_support/recording-logger.ts';

const test = suite('refusal logs');
const MINUTE = () => 60_000;

test('refusal-logs :: one check-in line per instance per window, naming the reason and the remote; never the secret', () => {
  const bus = createBus();
  const log = recordingLogger();
  const stop = logRejectedCheckins(bus, log, MINUTE, () => true);
  const reject = (key: string, reason: string) =>
    bus.emit('instance:checkin-rejected', { key, reason, remote: '127.0.0.1', at: 1 });
  reject('alpha', 'stale or wrong token');
  for (let i = 0; i < 50; i++) reject('alpha', 'stale or wrong token'); // a server pinging in a loop
  reject('beta', 'stale or wrong token');
  reject('alpha', 'malformed header: missing or not Basic');
  assert.equal(
    log.lines.map((l) => [l.level, l.msg, l.fields?.key, l.fields?.remote]),
    [
      ['warn', 'check-in rejected: stale or wrong token', 'alpha', '127.0.0.1'],
      ['warn', 'check-in rejected: stale or wrong token', 'beta', '127.0.0.1'],
    ],
  );
  // The rest of the window (here cut short by the stop): one line, with their count and the last reason.
  stop();
  const summary = log.lines.slice(2);
  assert.is(summary.length, 1);
  assert.match(
    summary[0]?.msg ?? '',
    /^check-in rejected: malformed header: missing or not Basic \(51 more in the last \d+ s\)$/,
  );
  assert.equal([summary[0]?.fields?.key, summary[0]?.fields?.rejected], ['alpha', 51]);
  reject('alpha', 'stale or wrong token');
  assert.is(log.lines.length, 3, 'unsubscribed');
});

test('refusal-logs :: check-ins for keys that are not configured share one window, whatever a client invents', () => {
  const bus = createBus();
  const log = recordingLogger();
  const stop = logRejectedCheckins(bus, log, MINUTE, (key) => key === 'alpha');
  for (let i = 0; i < 500; i++)
    bus.emit('instance:checkin-rejected', {
      key: `made-up-${i}`,
      reason: 'unknown instance',
      remote: '127.0.0.1',
      at: 1,
    });
  bus.emit('instance:checkin-rejected', { key: 'alpha', reason: 'stale or wrong token', remote: '127.0.0.1', at: 2 });
  assert.equal(
    log.lines.map((l) => [l.msg, l.fields?.key]),
    [
      ['check-in rejected: unknown instance', 'made-up-0'],
      ['check-in rejected: stale or wrong token', 'alpha'],
    ],
  );
  stop();
  assert.equal(log.lines[2]?.fields?.rejected, 499);
});

test('refusal-logs :: a check-in window of 0 logs every rejection', () => {
  const bus = createBus();
  const log = recordingLogger();
  const stop = logRejectedCheckins(
    bus,
    log,
    () => 0,
    () => true,
  );
  for (let i = 0; i < 3; i++)
    bus.emit('instance:checkin-rejected', { key: 'alpha', reason: 'stale or wrong token', remote: undefined, at: 5 });
  stop();
  assert.is(log.lines.length, 3);
  assert.is(log.lines[0]?.fields?.remote, '');
});

test('refusal-logs :: refused requests: the first from a source in full, the rest summarised', () => {
  const bus = createBus();
  const log = recordingLogger();
  const stop = logRefusedRequests(bus, log, MINUTE);
  for (let i = 0; i < 3; i++)
    bus.emit('daemon:request-refused', {
      route: 'control',
      action: 'restart',
      key: 'alpha',
      user: undefined,
      remote: '10.0.0.1',
      status: 401,
      reason: 'wrong token',
      at: 1,
    });
  assert.equal(
    log.lines.map((l) => l.msg),
    ['control restart refused: wrong token (further refusals from this source are summarised every 60 s)'],
  );
  stop();
  assert.match(log.lines[1]?.msg ?? '', /^2 refused requests from 10\.0\.0\.1 in the last \d+ s$/);
});

test.run();
