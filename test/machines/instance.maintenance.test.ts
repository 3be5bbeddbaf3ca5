/**
 * A server asked to leave at its round end for a maintenance restart: its clean exit is that restart
 * (the maintenance region is in `pending.waiting.RoundEnd.asked`); any other exit stays what it was.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { classifyExit } from '../../machines/instance.context.ts';
import { createHarness } from './_support/harness.ts';

const exits = suite('instance :: exit after a maintenance round-end request');

exits('instance :: a clean exit after being asked to leave for a restart is that restart, not a crash', async () => {
  const h = createHarness();
  await h.run();
  const running = h.context();
  const asked = classifyExit(running, { code: 0, signal: null }, true);
  assert.is(asked.context.lastExit?.reason, 'restart');
  assert.is(asked.context.exitIntent, 'restart');
  assert.equal(asked.emitted, [{ type: 'restart', reason: 'request' }]);
  const unasked = classifyExit(running, { code: 0, signal: null }, false);
  assert.is(unasked.context.lastExit?.reason, 'crash', 'a clean exit nobody asked for');
  assert.equal(unasked.emitted, [{ type: 'restart', reason: 'exit' }]);
  const crashed = classifyExit(running, { code: 3, signal: null }, true);
  assert.is(crashed.context.lastExit?.reason, 'crash', 'a crash is a crash, asked or not');
  assert.is(crashed.context.crashStreak, 1);
  h.actor.stop();
});

exits.run();
