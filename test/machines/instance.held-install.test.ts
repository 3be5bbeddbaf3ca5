/**
 * A crash during a maintenance hold (while held, automatic update installs wait; crash handling is never
 * held): the relaunch starts the installed build and the update stays pending. `installHeld` reads the machine's
 * own hold region; `hold.on` sends HOLD and RELEASE_HOLD.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness, stampAt } from './_support/harness.ts';

const test = suite('instance :: relaunch during a maintenance hold');

function heldHarness() {
  const h = createHarness();
  const hold = {
    set on(held: boolean) {
      const at = stampAt(h.clock.now());
      h.actor.send(held ? { type: 'HOLD', ms: 3_600_000, reason: 'event', at } : { type: 'RELEASE_HOLD', at });
    },
  };
  return { h, hold };
}

/** Running (or crashed once, checked in again), an update found, then held: where the tests start. */
async function heldWithUpdate(start: 'run' | 'crashedOnce') {
  const { h, hold } = heldHarness();
  await h[start]();
  await h.checkUpdate(true);
  hold.on = true;
  return { h, hold };
}

test('held-install :: held: a crash relaunches the installed build at once, the update stays pending', async () => {
  const { h } = await heldWithUpdate('run');
  h.proc().exit(1);
  assert.is(h.state(), 'server.starting', 'relaunched without updating');
  assert.is(h.updates.length, 0, 'no install started');
  assert.is(h.context().updatePending, true);
  assert.equal(h.restarts(), ['crash']);
  // A hang kill is crash handling too.
  h.checkin();
  h.clock.increment(5_000);
  h.clock.increment(5_000);
  assert.is(h.proc().commands.at(-1)?.type, 'KILL');
  h.proc().exit(null, 'SIGKILL');
  assert.is(h.updates.length, 0, 'a hang kill relaunches the installed build too');
  assert.equal(h.errors, []);
  h.stop();
});

test('held-install :: held: the back-off relaunch of a crash loop does not install either', async () => {
  const { h } = await heldWithUpdate('crashedOnce');
  h.proc().exit(1);
  assert.is(h.state(), 'restarting.backoff');
  h.clock.increment(60_000);
  assert.is(h.state(), 'server.starting');
  assert.is(h.updates.length, 0);
  assert.is(h.context().updatePending, true);
  h.stop();
});

test("held-install :: held: a person's restart and the startup-failure limit still install; unheld, a crash installs", async () => {
  const { h, hold } = await heldWithUpdate('run');
  h.actor.send({ type: 'RESTART' });
  h.proc().exit(0);
  assert.is(h.state(), 'updating', 'a requested restart installs');
  await h.finishUpdate({ revision: 'r2', changed: true });
  // Startup failures up to the limit (3) relaunch the installed build; at the limit the update is tried.
  await h.checkUpdate(true);
  h.proc().exit(1);
  h.proc().exit(1);
  assert.is(h.updates.length, 0, 'below the limit: no install');
  h.proc().exit(1);
  assert.is(h.state(), 'updating', 'at the limit a new build may be what it needs');
  await h.finishUpdate({ revision: 'r3', changed: true });
  h.checkin();
  await h.checkUpdate(true);
  hold.on = false;
  h.proc().exit(1);
  assert.is(h.state(), 'updating', 'without a hold a crash relaunch installs as before');
  assert.equal(h.errors, []);
  h.stop();
});

test('held-install :: held: the retry of a launch blocked after a crash does not install either', async () => {
  const { h, hold } = await heldWithUpdate('run');
  h.proc().exit(1);
  h.proc().blocked('resources');
  assert.is(h.state(), 'restarting.blocked');
  h.clock.increment(60_000);
  assert.is(h.state(), 'server.starting', 'retried on the installed build');
  assert.is(h.updates.length, 0, 'no install started');
  assert.is(h.context().updatePending, true);
  hold.on = false;
  h.proc().blocked('resources');
  h.clock.increment(60_000);
  assert.is(h.state(), 'updating', 'once the hold is gone the pending update goes first');
  assert.equal(h.errors, []);
  h.stop();
});

test.run();
