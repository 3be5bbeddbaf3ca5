import * as assert from 'uvu/assert';
import { harnessSuite, stampAt } from './_support/harness.ts';

const restore = harnessSuite('instance restore');

restore('instance :: ROLLBACK withData hands the flag to the rollback actor, once', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'ROLLBACK', withData: true });
  h.proc().exit(0);
  assert.equal(h.rollbacks[0]?.input, { key: 'alpha', withData: true });
  await h.finishRollback('r0');
  assert.is(h.state(), 'server.starting');
  h.actor.send({ type: 'STOP' });
  h.proc().exit(0);
  h.actor.send({ type: 'ROLLBACK' });
  assert.equal(
    h.rollbacks.at(-1)?.input,
    { key: 'alpha', withData: false },
    'a later rollback without it keeps the data',
  );
});

restore(
  'instance :: RESTORE while running stops the server gracefully, restores with none running, relaunches',
  async ({ h }) => {
    await h.run();
    h.actor.send({ type: 'RESTORE', id: 'snap-1' });
    assert.is(h.state(), 'server.stopping');
    assert.equal(h.proc().commands, [{ type: 'STOP_GRACEFULLY', reason: 'Backup restore requested by the watchdog' }]);
    assert.is(h.restores.length, 0, 'the data is not touched while the server runs');
    assert.is(h.refusal('rollback'), null, 'a rollback may still take over from a restore that has not begun');
    h.proc().exit(0);
    assert.is(h.state(), 'restoring');
    assert.equal(h.restores[0]?.input, { key: 'alpha', id: 'snap-1' });
    assert.is(h.refusal('restart'), 'a backup is being restored');
    assert.is(h.refusal('restore'), 'a backup is being restored');
    await h.finishRestore('saved-1');
    assert.is(h.state(), 'server.starting');
    assert.is(h.processes.length, 2);
    assert.equal(h.restarts(), ['request']);
    assert.ok(h.emitted.some((e) => e.type === 'restored' && e.id === 'snap-1' && e.saved === 'saved-1'));
  },
);

restore('instance :: a failed restore of a running server relaunches it on the data it had', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'RESTORE', id: 'snap-1' });
  h.proc().exit(0);
  await h.failRestore('no space left');
  assert.is(h.state(), 'server.starting');
  assert.is(h.context().exitIntent, null);
  assert.ok(h.emitted.some((e) => e.type === 'restore-failed' && e.id === 'snap-1' && e.message === 'no space left'));
});

restore('instance :: RESTORE while stopped restores and starts; a failure leaves it stopped', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'STOP' });
  h.proc().exit(0);
  h.actor.send({ type: 'RESTORE', id: 'snap-2' });
  assert.is(h.state(), 'restoring');
  await h.failRestore();
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.processes.length, 1);
  h.actor.send({ type: 'RESTORE', id: 'snap-3' });
  assert.equal(h.restores.at(-1)?.input, { key: 'alpha', id: 'snap-3' });
  await h.finishRestore();
  assert.is(h.state(), 'server.starting');
});

restore('instance :: STOP during a restore finishes it and stays stopped', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'RESTORE', id: 'snap-1' });
  h.proc().exit(0);
  h.actor.send({ type: 'STOP' });
  await h.finishRestore();
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.processes.length, 1);
});

restore('instance :: RESTORE is refused while updating and while a rollback runs', async ({ h }) => {
  h.actor.send({ type: 'START' });
  assert.match(h.refusal('restore') ?? '', /update is being installed/);
  h.actor.send({ type: 'RESTORE', id: 'x' });
  assert.is(h.state(), 'updating');
  await h.finishUpdate();
  h.actor.send({ type: 'STOP' });
  h.proc().exit(0);
  h.actor.send({ type: 'ROLLBACK' });
  assert.is(h.refusal('restore'), 'a rollback is already under way');
  h.actor.send({ type: 'RESTORE', id: 'x' });
  assert.is(h.restores.length, 0);
});

restore(
  'instance :: a restore at the round end asks the server to leave, then restores before the relaunch',
  async ({ h }) => {
    await h.run();
    h.actor.send({
      type: 'MAINTAIN',
      source: 'request',
      when: 'RoundEnd',
      restore: 'snap-9',
      at: stampAt(h.clock.now()),
    });
    assert.equal(h.proc().commands, [{ type: 'LEAVE' }], 'asked to leave, not stopped');
    assert.is(h.context().maintenance.pending?.restore, 'snap-9');
    assert.is(h.restores.length, 0, 'nothing is restored while the round goes on');
    h.proc().exit(0);
    assert.is(h.state(), 'restoring');
    assert.equal(h.restores.at(-1)?.input, { key: 'alpha', id: 'snap-9' });
    assert.equal(h.restarts(), ['request'], 'the leave counts as the requested restart');
    await h.finishRestore();
    assert.is(h.state(), 'server.starting');
    assert.is(h.context().maintenance.pending, null, 'the pending restore is done');
  },
);

restore('instance :: a restore whose moment is now, or with no server, restores without waiting', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'MAINTAIN', source: 'request', when: 'Now', restore: 'snap-1', at: stampAt(h.clock.now()) });
  assert.is(h.state(), 'server.stopping');
  assert.equal(h.proc().commands, [{ type: 'STOP_GRACEFULLY', reason: 'Backup restore requested by the watchdog' }]);
  h.proc().exit(0);
  assert.is(h.state(), 'restoring');
  await h.finishRestore();
  h.actor.send({ type: 'STOP' });
  h.proc().exit(0);
  h.actor.send({
    type: 'MAINTAIN',
    source: 'request',
    when: 'RoundEnd',
    restore: 'snap-2',
    at: stampAt(h.clock.now()),
  });
  assert.is(h.state(), 'restoring', 'a stopped instance has no round to wait for');
  assert.equal(h.restores.at(-1)?.input, { key: 'alpha', id: 'snap-2' });
});

restore(
  'instance :: a restore at the round end that the deadline forces is a graceful stop, then the restore',
  async ({ h }) => {
    await h.run();
    h.actor.send({
      type: 'MAINTAIN',
      source: 'request',
      when: 'RoundEnd',
      restore: 'snap-3',
      at: stampAt(h.clock.now()),
    });
    h.clock.increment(h.context().maintenance.rules.maxDelayMs + 1);
    assert.equal(h.proc().commands.at(-1), {
      type: 'STOP_GRACEFULLY',
      reason: 'Backup restore requested by the watchdog',
    });
    h.proc().exit(0);
    assert.is(h.state(), 'restoring');
    assert.equal(h.restores.at(-1)?.input, { key: 'alpha', id: 'snap-3' });
  },
);

restore.run();
