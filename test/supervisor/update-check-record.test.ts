/** The outcome of update checks (src/supervisor/update-actors.ts): status, bus events, one notice per run. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type BusEvents, createBus } from '../../src/bus.ts';
import { createCheckRecord } from '../../src/supervisor/update-actors.ts';

const test = suite('supervisor :: update check outcomes');
const MIN = 60_000;

function setup(alertAfterMs: number) {
  const bus = createBus();
  const checks: BusEvents['instance:update-check'][] = [];
  const notices: BusEvents['instance:notice'][] = [];
  bus.on('instance:update-check', (e) => checks.push(e));
  bus.on('instance:notice', (e) => notices.push(e));
  return { record: createCheckRecord({ key: 'a', bus, alertAfterMs: () => alertAfterMs }), checks, notices };
}

test('update-check-record :: failures in a row: one notice once they last alertAfterMs, one when a check works again', () => {
  const { record, checks, notices } = setup(30 * MIN);
  assert.is(record.status(), null, 'nothing before the first check');
  record.succeeded(false, 0);
  record.failed('cannot fetch the manifest at x: connect ECONNREFUSED 127.0.0.1:9', 10 * MIN);
  record.failed('still down', 20 * MIN);
  assert.is(notices.length, 0, 'not yet: failing for 10 minutes');
  record.failed('still down', 41 * MIN);
  record.failed('still down', 50 * MIN);
  assert.is(notices.length, 1, 'told once');
  assert.is(notices[0]?.kind, 'update-check');
  assert.match(
    notices[0]?.message ?? '',
    /^Update checks of `a` have failed since 1970-01-01T00:10:00.000Z \(last success 1970-01-01T00:00:00.000Z\): still down\./,
  );
  assert.equal(record.status(), {
    at: new Date(50 * MIN).toISOString(),
    result: 'failed',
    error: 'still down',
    failingSince: new Date(10 * MIN).toISOString(),
    lastSuccessAt: new Date(0).toISOString(),
  });
  record.succeeded(true, 60 * MIN);
  assert.is(notices.length, 2);
  assert.match(notices[1]?.message ?? '', 'work again (they had failed since 1970-01-01T00:10:00.000Z)');
  assert.equal([record.status()?.result, record.status()?.failingSince], ['available', null]);
  assert.equal(
    checks.map((c) => [c.ok, c.available, c.error !== null]),
    [
      [true, false, false],
      [false, false, true],
      [false, false, true],
      [false, false, true],
      [false, false, true],
      [true, true, false],
    ],
  );
});

test('update-check-record :: alertAfterMs 0: the first failure is told; a success without a notice before it says nothing', () => {
  const { record, notices } = setup(0);
  record.succeeded(false, 0);
  assert.is(notices.length, 0);
  record.failed('down', 1);
  assert.is(notices.length, 1);
  assert.match(notices[0]?.message ?? '', '(last success 1970-01-01T00:00:00.000Z)');
  const fresh = setup(0);
  fresh.record.failed('down', 5);
  assert.match(fresh.notices[0]?.message ?? '', 'no check has worked since the daemon started');
});

test.run();
