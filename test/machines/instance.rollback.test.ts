import * as assert from 'uvu/assert';
import { BUSY_REASONS, refusalOf } from '../../machines/instance.refusals.ts';
import { crashLoop, harnessSuite } from './_support/harness.ts';

const rollback = harnessSuite('instance rollback');

rollback(
  'instance :: ROLLBACK while running shuts the server down, rolls back, relaunches on the old build',
  async ({ h }) => {
    await h.run();
    h.actor.send({ type: 'ROLLBACK' });
    assert.is(h.state(), 'server.stopping');
    assert.equal(h.proc().commands, [{ type: 'STOP_GRACEFULLY', reason: 'Rollback requested by the watchdog' }]);
    assert.is(h.rollbacks.length, 0, 'bin/ is not touched while the server runs');
    h.proc().exit(0);
    assert.is(h.state(), 'rolling-back');
    assert.equal(h.rollbacks[0]?.input, { key: 'alpha', withData: false });
    await h.finishRollback('r0');
    assert.is(h.state(), 'server.starting');
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
  assert.is(h.state(), 'server.starting');
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
  assert.is(h.state(), 'server.starting');
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
  assert.is(h.refusal('rollback'), 'an update is being installed; roll back once it is done');
  h.actor.send({ type: 'ROLLBACK' });
  assert.is(h.state(), 'updating');
  await h.finishUpdate();
  h.checkin();
  h.proc().exit(1);
  h.checkin();
  h.proc().exit(1);
  assert.is(h.state(), 'restarting.backoff');
  assert.match(h.refusal('rollback') ?? '', /between crash relaunches/);
  h.actor.send({ type: 'ROLLBACK' });
  assert.is(h.state(), 'restarting.backoff');
  h.actor.send({ type: 'STOP' });
  assert.is(h.refusal('rollback'), null, 'a stopped instance rolls back');
  h.actor.send({ type: 'ROLLBACK' });
  assert.is(h.refusal('rollback'), 'a rollback is already under way');
  assert.is(h.refusal('restart'), 'a rollback is already under way');
  h.actor.send({ type: 'ROLLBACK' });
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

// --- the synchronous answer: refusalOf reads the machine (can) and its tags

const answers = harnessSuite('instance answers');

const facts = { canUpdate: true, canRollback: true };
const ACTIONS = ['restart', 'update', 'stop', 'rollback'] as const;

answers(
  'refusalOf :: rollback is refused exactly where the machine cannot take it, with the tag reason',
  async ({ h }) => {
    await crashLoop(h);
    const snap = h.actor.getSnapshot();
    assert.is(snap.can({ type: 'ROLLBACK' }), false);
    assert.ok(snap.hasTag('backing-off'));
    assert.is(refusalOf(snap, 'rollback', facts), BUSY_REASONS['backing-off']);
    h.actor.send({ type: 'ROLLBACK' });
    assert.is(h.state(), 'restarting.backoff', 'the refused event changed nothing');
    assert.is(h.rollbacks.length, 0);
    for (const action of ['restart', 'update', 'stop'] as const) assert.is(h.refusal(action), null, action);
  },
);

answers(
  'refusalOf :: no provider refuses update, no bin.prev refuses rollback, a shutdown refuses all; the rest is taken',
  async ({ h }) => {
    h.actor.send({ type: 'START' });
    assert.is(h.state(), 'updating');
    for (const action of ['restart', 'update', 'stop'] as const) assert.is(h.refusal(action), null, action);
    await h.finishUpdate();
    h.proc().started(100);
    h.checkin();
    for (const action of ACTIONS) assert.is(h.refusal(action), null, `running takes ${action}`);
    const snap = () => h.actor.getSnapshot();
    assert.match(refusalOf(snap(), 'update', { ...facts, canUpdate: false }) ?? '', /no update provider/);
    assert.match(refusalOf(snap(), 'rollback', { ...facts, canRollback: false }) ?? '', /bin\.prev/);
    const dummy = refusalOf(snap(), 'rollback', { ...facts, canRollback: false, updateType: 'Dummy' }) ?? '';
    assert.match(
      dummy,
      /UpdateType Dummy only restarts the server and keeps no build/,
      'says why a Dummy update left none',
    );
    h.actor.send({ type: 'STOP' });
    h.proc().exit(0);
    assert.is(h.state(), 'stopped.idle');
    assert.is(h.refusal('stop'), null, 'stop is idempotent');
    h.actor.send({ type: 'SHUTDOWN', persist: false });
    assert.is(h.state(), 'exited');
    for (const action of ACTIONS) assert.is(h.refusal(action), 'the watchdog is shutting down', action);
  },
);

answers.run();
