/**
 * A server the kernel killed at its hard memory limit (`Limits.MemoryMB`; runProcess reads its cgroup's
 * `memory.events` and says so on PROCESS_EXITED): the exit's reason says it, the chat's crash notice words it, and it
 * counts as a crash for the back-off. The real kernel doing it: test/e2e/hard-limits.test.ts.
 */
import * as assert from 'uvu/assert';
import { alertMessage } from '../../src/notify/messages.ts';
import { type Harness, harnessSuite } from './_support/harness.ts';

const test = harnessSuite('instance :: killed at the memory limit');

/** The current launch killed by the kernel at a 2048 MB limit. */
const killedAtLimit = (h: Harness) =>
  h.actor.send({
    type: 'PROCESS_EXITED',
    launchId: h.context().launchId,
    code: null,
    signal: 'SIGKILL',
    memoryLimitMB: 2048,
  });

test('instance :: the exit is told as the memory limit: lastExit, the crash notice', async ({ h }) => {
  await h.run();
  killedAtLimit(h);
  assert.equal(h.context().lastExit, {
    code: null,
    signal: 'SIGKILL',
    reason: 'memory-limit',
    detail: 'killed at its memory limit of 2048 MB',
    memoryLimitMB: 2048,
  });
  assert.is(h.state(), 'server.starting', 'relaunched at once, as after a first crash');
  assert.equal(h.alerts(), ['crash']);
  assert.equal(h.restarts(), ['crash']);
  const alert = h.alert('crash');
  assert.ok(alert);
  assert.equal(alert.exit, { code: null, signal: 'SIGKILL', memoryLimitMB: 2048 });
  assert.is(
    alertMessage('alpha', { type: 'alert', kind: 'crash', ...alert }),
    'Server `alpha` was killed at its memory limit of 2048 MB. Check server logs for possible causes.',
  );
});

test('instance :: a second kill at the limit after a check-in is a crash loop: back-off', async ({ h }) => {
  await h.run();
  killedAtLimit(h);
  h.checkin();
  killedAtLimit(h);
  assert.is(h.state(), 'restarting.backoff');
  assert.equal(h.alerts(), ['crash', 'crash-loop']);
  assert.is(h.context().crashStreak, 2);
});

test('instance :: a plain SIGKILL is a crash, not the memory limit', async ({ h }) => {
  await h.run();
  h.proc().exit(null, 'SIGKILL');
  assert.is(h.context().lastExit?.reason, 'crash');
  assert.is(h.context().lastExit?.memoryLimitMB, undefined);
});

test.run();
