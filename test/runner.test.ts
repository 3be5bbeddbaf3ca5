/** The test runner's scheduling (test/_support/schedule.ts): files start while their measured loads fit the cores. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BATCH_SECONDS, loadOf, mayStart, OVERCOMMIT, units } from './_support/schedule.ts';

const test = suite('test runner :: schedule');

test('schedule :: a load is CPU over wall time, bounded; a file never measured counts as a whole core', () => {
  assert.is(loadOf({ seconds: 20, cpu: 5 }), 0.25);
  assert.is(loadOf({ seconds: 10, cpu: 40 }), 1.5, 'a burst of processes is not counted as more than 1.5 cores');
  assert.is(loadOf({ seconds: 100, cpu: 0.1 }), 0.05, 'a file that only waits still counts a little');
  assert.is(loadOf(undefined), 1);
  assert.is(loadOf({ seconds: 0, cpu: 0 }), 1, 'a run too short to measure counts as unknown');
});

test('schedule :: files start while their loads fit the cores, up to the most at once; alone with nothing running', () => {
  const opts = { cores: 2, maxJobs: 4 };
  assert.ok(mayStart(1.5, [], opts), 'the first file starts whatever its load');
  assert.ok(mayStart(1, [1], opts), 'two whole-core files fill two cores');
  assert.not.ok(mayStart(0.5, [1, 0.9], opts), 'not past the cores');
  assert.ok(mayStart(0.1, [0.2, 0.2, 0.1], opts), 'waiting files fill in');
  assert.not.ok(mayStart(0.1, [0.2, 0.2, 0.1, 0.1], opts), 'never more than maxJobs at once');
  assert.not.ok(mayStart(0.1, [0.5], { cores: 2, maxJobs: 1 }), 'TEST_JOBS=1: one at a time');
});

test('schedule :: past the loads, up to OVERCOMMIT times the cores, only into cores seen idle just now', () => {
  const opts = { cores: 2, maxJobs: 6 };
  assert.not.ok(mayStart(0.5, [1, 0.9], opts), 'no reading: the loads decide');
  assert.ok(mayStart(0.5, [1, 0.9], { ...opts, idleCores: 0.6 }), 'idle room for it: it starts');
  assert.not.ok(mayStart(0.5, [1, 0.9], { ...opts, idleCores: 0.3 }), 'too little idle for its load');
  assert.ok(
    mayStart(1.4, [1], { ...opts, idleCores: 1 }),
    "a load above one core needs one idle core: the rest is children's",
  );
  assert.not.ok(mayStart(0.5, [1.5, 1.2], { ...opts, idleCores: 2 }), `never past ${OVERCOMMIT} times the cores`);
  assert.not.ok(mayStart(0.1, [0.2, 0.2, 0.1, 0.1, 0.1, 0.1], { ...opts, idleCores: 2 }), 'nor past maxJobs');
});

test('schedule :: short files run in batches of about BATCH_SECONDS, in order; others, and those kept apart, alone', () => {
  const costs: Record<string, { seconds: number; cpu: number }> = {
    long: { seconds: 40, cpu: 9 },
    busy: { seconds: 2, cpu: 3.5 },
    a: { seconds: 6.5, cpu: 0.5 },
    b: { seconds: 6.5, cpu: 0.2 },
    kept: { seconds: 1, cpu: 0.1 },
    c: { seconds: 6.5, cpu: 0.3 },
    d: { seconds: 1, cpu: 0.1 },
  };
  const got = units(
    ['long', 'busy', 'a', 'b', 'kept', 'c', 'd', 'new'],
    (f) => costs[f],
    (f) => f !== 'kept',
  );
  assert.equal(
    got.map((u) => u.files),
    [['long'], ['busy'], ['a', 'b', 'c'], ['kept'], ['d'], ['new']],
    'a busy file, a never measured one and one kept apart run alone; a batch closes before BATCH_SECONDS',
  );
  assert.equal(got[2]!.cost, { seconds: 19.5, cpu: 1 }, "a batch's cost is its files' added up");
  assert.ok(19.5 + 1 > BATCH_SECONDS);
  assert.is(got[5]!.cost, undefined);
});

test.run();
