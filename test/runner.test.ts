/** The test runner's scheduling (test/_support/schedule.ts): files start while their measured loads fit the cores. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadOf, mayStart } from './_support/schedule.ts';

const test = suite('test runner :: schedule');

test('schedule :: a load is CPU over wall time, bounded; a file never measured counts as a whole core', () => {
  assert.is(loadOf({ seconds: 20, cpu: 5 }), 0.25);
  assert.is(loadOf({ seconds: 10, cpu: 40 }), 1.5, 'a burst of processes is not counted as more than 1.5 cores');
  assert.is(loadOf({ seconds: 100, cpu: 0.1 }), 0.05, 'a file that only waits still counts a little');
  assert.is(loadOf(undefined), 1);
  assert.is(loadOf({ seconds: 0, cpu: 0 }), 1, 'a run too short to measure counts as unknown');
});

test('schedule :: files start while the running loads leave room, up to the most at once; alone with nothing running', () => {
  const opts = { cores: 2, maxJobs: 4 };
  assert.ok(mayStart([], opts), 'the first file starts whatever its load');
  assert.ok(mayStart([1], opts), 'one whole-core file leaves a core');
  assert.ok(mayStart([1, 0.9], opts), 'a little room is room: the next file may overfill it');
  assert.not.ok(mayStart([1, 1], opts), 'not once the cores are full');
  assert.not.ok(mayStart([1.5, 0.6], opts), 'nor past them');
  assert.ok(mayStart([0.2, 0.2, 0.1], opts), 'waiting files fill in');
  assert.not.ok(mayStart([0.2, 0.2, 0.1, 0.1], opts), 'never more than maxJobs at once');
  assert.not.ok(mayStart([0.5], { cores: 2, maxJobs: 1 }), 'TEST_JOBS=1: one at a time');
});

test.run();
