/** memoryOverLimit (src/supervisor/instance-resources.ts): when a server's memory calls for a restart, and the words. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { memoryOverLimit } from '../../src/supervisor/instance-resources.ts';

const test = suite('supervisor :: MemoryLimitMB');
const MiB = 1024 * 1024;

test('memory-limit :: within the limit, at it, or no limit: nothing to do', () => {
  assert.is(memoryOverLimit(100 * MiB, 2048), null);
  assert.is(memoryOverLimit(2048 * MiB, 2048), null);
  assert.is(memoryOverLimit(64 * 1024 * MiB, undefined), null);
});

test('memory-limit :: past it: how much, against the configured figure', () => {
  assert.is(memoryOverLimit(2048 * MiB + 1, 2048), 'memory 2.1 GB over MemoryLimitMB 2048');
  assert.is(memoryOverLimit(600 * MiB, 512.5), 'memory 629 MB over MemoryLimitMB 512.5');
});

test.run();
