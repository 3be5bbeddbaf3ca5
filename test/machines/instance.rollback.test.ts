import * as assert from 'uvu/assert';
import { refusalOf, ROLLBACK_BUSY } from '../../machines/instance.context.ts';
import { crashLoop, harnessSuite, type Harness } from './harness.ts';

const rollback = harnessSuite('instance rollback');

const refusals = (h: Harness) => h.emitted.flatMap((e) => (e.type === 'rollback-refused' ? [e.reason] : []));

rollback(
  'instance :: ROLLBACK while running shuts the server down, rolls back, relaunches on the old build',
  async ({ h }) => {
    await h.run();
    h.actor.send({ type: 'ROLLBACK' });
    assert.is(h.state(), 'restarting.stopping');
    assert.equal(h.proc().commands, [{ type: 'SHUTDOWN', reason: 'Rollback requested by the watchdog' }]);
    assert.is(h.rollbacks.length, 0, 'bin/ is not touched while the server runs');
    h.proc().exit(0);
    assert.is(h.state(), 'rolling-back');
    assert.equal(h.rollbacks[0]?.input, { key: 'alpha' });
    await h.finishRollback('r0');
    assert.is(h.state(), 'starting');
    assert.is(h.context().revision, 'r0', 'status and the next update check see the rolled-back revision');
    assert.is(h.processes.length, 2);
    assert.equal(h.restarts(), ['request']);
    assert.ok(h.emitted.some((e) => e.type === 'rolled-back' && e.revision === 'r0'));
    h.actor.send({ type: 'UPDATE_CHECK' });
    assert.is(h.checks.at(-1)?.input.revision, 'r0');
  },
);

rollback('instance :: a failed rollback of a running server relaunches the installed build', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'ROLLBACK' });
  h.proc().exit(0);
  await h.failRollback('no bin.prev');
  assert.is(h.state(), 'starting');
  assert.is(h.context().revision, 'r1');
  assert.ok(h.emitted.some((e) => e.type === 'rollback-failed' && e.message === 'no bin.prev'));
});

rollback('instance :: ROLLBACK while stopped rolls back and launches; a failure leaves it stopped', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'STOP' });
  h.proc().exit(0);
  h.actor.send({ type: 'ROLLBACK' });
  assert.is(h.state(), 'rolling-back');
  await h.failRollback();
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.processes.length, 1);
  h.actor.send({ type: 'ROLLBACK' });
  await h.finishRollback('r0');
  assert.is(h.state(), 'starting');
  assert.is(h.context().revision, 'r0');
  assert.is(h.context().exitIntent, null, 'the rollback withdrew the stop');
});

rollback('instance :: STOP during a rollback rolls back and stays stopped', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'ROLLBACK' });
  h.proc().exit(0);
  h.actor.send({ type: 'STOP' });
  await h.finishRollback('r0');
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.context().revision, 'r0');
  assert.is(h.processes.length, 1);
});

rollback('instance :: ROLLBACK is refused with a reason while updating, backing off or rolling back', async ({ h }) => {
  h.actor.send({ type: 'START' });
  h.actor.send({ type: 'ROLLBACK' });
  assert.is(h.state(), 'updating');
  assert.equal(refusals(h), ['an update is being installed; roll back once it is done']);
  await h.finishUpdate();
  h.checkin();
  h.proc().exit(1);
  h.checkin();
  h.proc().exit(1);
  assert.is(h.state(), 'restarting.backoff');
  h.actor.send({ type: 'ROLLBACK' });
  assert.is(h.state(), 'restarting.backoff');
  assert.match(refusals(h)[1] ?? '', /between crash relaunches/);
  h.actor.send({ type: 'STOP' });
  h.actor.send({ type: 'ROLLBACK' });
  h.actor.send({ type: 'ROLLBACK' });
  assert.equal(refusals(h).slice(2), ['a rollback is already under way']);
  assert.is(h.rollbacks.length, 1);
});

rollback('instance :: SHUTDOWN during a rollback ends the machine; the rollback is cancelled', async ({ h }) => {
  h.actor.send({ type: 'ROLLBACK' });
  const r = h.rollbacks[0];
  h.actor.send({ type: 'SHUTDOWN', persist: false });
  assert.is(h.state(), 'exited');
  assert.is(r?.signal.aborted, true);
});

rollback.run();

// --- the synchronous answer: refusalOf agrees with the machine

const answers = harnessSuite('instance answers');

const facts = { canUpdate: true, canRollback: true };

answers(
  'refusalOf :: rollback is refused exactly where the machine refuses it, with the same reason',
  async ({ h }) => {
    await crashLoop(h);
    const why = refusalOf('rollback', h.state(), facts);
    assert.ok(why);
    h.actor.send({ type: 'ROLLBACK' });
    assert.equal(
      h.emitted.filter((e) => e.type === 'rollback-refused'),
      [{ type: 'rollback-refused', reason: why! }],
    );
    for (const state of [
      'running',
      'starting',
      'awaiting-checkin',
      'stopped.idle',
      'stopped.failing',
      'restarting.stopping',
    ]) {
      assert.is(refusalOf('rollback', state, facts), null, state);
    }
    assert.is(refusalOf('rollback', 'updating', facts), ROLLBACK_BUSY.updating);
    assert.is(refusalOf('rollback', 'rolling-back', facts), ROLLBACK_BUSY.rollingBack);
  },
);

answers(
  'refusalOf :: no provider refuses update, no bin.prev refuses rollback, a shutdown refuses all; the rest is taken',
  () => {
    assert.match(refusalOf('update', 'running', { ...facts, canUpdate: false }) ?? '', /no update provider/);
    assert.match(refusalOf('rollback', 'running', { ...facts, canRollback: false }) ?? '', /bin\.prev/);
    for (const action of ['restart', 'update', 'stop', 'rollback'] as const) {
      assert.is(refusalOf(action, 'exited', facts), 'the watchdog is shutting down');
      if (action !== 'rollback') assert.is(refusalOf(action, 'updating', facts), null, action);
    }
    assert.is(refusalOf('stop', 'stopped.idle', facts), null, 'stop is idempotent');
  },
);

answers.run();
