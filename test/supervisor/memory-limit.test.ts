/** memoryOverLimit (src/supervisor/instance-resources.ts): when a server's memory calls for a restart, and the words. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryOverLimit } from '../../src/supervisor/instance-resources.ts';

const test = suite('supervisor :: MemoryLimitMB');
const MB = 1_000_000;

test('memory-limit :: in decimal megabytes: within the limit, at it, or no limit: nothing to do', () => {
  assert.is(memoryOverLimit(100 * MB, 2048), null);
  assert.is(memoryOverLimit(2048 * MB, 2048), null);
  assert.is(memoryOverLimit(64_000 * MB, undefined), null);
});

test('memory-limit :: past it: how much, against the configured figure', () => {
  assert.is(memoryOverLimit(2048 * MB + 1, 2048), 'memory 2 GB over MemoryLimitMB 2048');
  assert.is(memoryOverLimit(600 * MB, 512.5), 'memory 600 MB over MemoryLimitMB 512.5');
});

test.run();
