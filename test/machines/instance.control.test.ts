import * as assert from 'uvu/assert';
import { controlEvent } from '../../machines/instance.refusals.ts';
import { crashLoop, createHarness, harnessSuite, TIMING } from './_support/harness.ts';

// --- STOP and RESTART

const control = harnessSuite('instance control');

const operatorStopped = (h: { actor: { getSnapshot(): { matches(v: object): boolean } } }) =>
  h.actor.getSnapshot().matches({ operatorStop: 'stopped' });

control('control :: each action sends its event; a restart or restore at a moment is MAINTAIN', () => {
  assert.equal(controlEvent('stop', { by: 'boss', at: { wall: 0, mono: 7 } }), {
    type: 'STOP',
    by: 'boss',
    at: '1970-01-01T00:00:00.000Z',
  });
  assert.equal(controlEvent('restart', {}), { type: 'RESTART' });
  assert.equal(controlEvent('restart', { when: 'Empty', by: 'mo', at: { wall: 5, mono: 7 } }), {
    type: 'MAINTAIN',
    source: 'request',
    when: 'Empty',
    by: 'mo',
    at: { wall: 5, mono: 7 },
  });
  assert.equal(controlEvent('update', {}), { type: 'UPDATE_CHECK' });
  assert.equal(controlEvent('update', { when: 'Now' }), { type: 'UPDATE_CHECK', when: 'Now' });
  assert.equal(controlEvent('rollback', { withData: true }), { type: 'ROLLBACK', withData: true });
  assert.equal(controlEvent('restore', { when: 'Now', snapshot: 's1' }), { type: 'RESTORE', id: 's1' });
  assert.equal(controlEvent('restore', { snapshot: 's1', at: { wall: 5, mono: 7 } }), {
    type: 'MAINTAIN',
    source: 'request',
    reason: 'restore of backup s1',
    restore: 's1',
    at: { wall: 5, mono: 7 },
  });
});

control(
  'instance :: STOP while stopped leaves the lifecycle as it is; the stop stands until a restart',
  async ({ h }) => {
    await h.failing();
    h.actor.send({ type: 'STOP', by: 'by boss', at: '2026-01-02T03:04:05.000Z' });
    assert.is(h.state(), 'stopped.failing');
    assert.is(h.context().exitIntent, null);
    assert.ok(operatorStopped(h), 'the chart holds the operator stop');
    assert.equal(h.context().stop, { by: 'by boss', at: '2026-01-02T03:04:05.000Z' });
    // A build found later does not start an instance an operator stopped; a restart does, and ends the stop.
    await h.checkUpdate(true);
    assert.is(h.state(), 'stopped.failing');
    h.actor.send({ type: 'RESTART' });
    assert.not.ok(operatorStopped(h));
    assert.is(h.state(), 'updating');
  },
);

control('instance :: a stop remembered at daemon start: START launches nothing; a restart starts it', async () => {
  const stop = { by: 'by boss', at: '2026-01-02T03:04:05.000Z' };
  const h = createHarness({}, undefined, {}, { stop });
  try {
    assert.ok(operatorStopped(h), 'stopped from the first moment');
    assert.equal(h.context().stop, stop);
    h.actor.send({ type: 'START' });
    assert.is(h.state(), 'stopped.idle');
    assert.is(h.processes.length, 0);
    // An update check does not start it either.
    await h.checkUpdate(true);
    assert.is(h.state(), 'stopped.idle');
    h.actor.send({ type: 'RESTART' });
    assert.not.ok(operatorStopped(h));
    assert.is(h.state(), 'updating');
  } finally {
    h.stop();
  }
});

control('instance :: without a remembered stop the instance starts on START', ({ h }) => {
  assert.not.ok(operatorStopped(h));
  h.actor.send({ type: 'START' });
  assert.is(h.state(), 'updating');
});

control('instance :: STOP while starting asks the server to leave; its exit stops the instance', async ({ h }) => {
  await h.launch();
  h.actor.send({ type: 'STOP' });
  assert.is(h.state(), 'server.starting');
  assert.equal(h.proc().commands, [{ type: 'LEAVE' }]);
  h.proc().exit(0);
  assert.is(h.state(), 'stopped.idle');
  assert.equal(h.alerts(), ['stopped']);
  assert.equal(h.restarts(), []);
  assert.is(h.processes.length, 1);
  assert.is(h.context().exitIntent, 'stop');
});

control('instance :: STOP carries who asked to the stopped alert; a later stop names its own asker', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'STOP', by: 'by boss from 10.0.0.5' });
  assert.equal(h.proc().commands, [{ type: 'LEAVE' }]);
  h.proc().exit(0);
  const stopped = () => h.emitted.flatMap((e) => (e.type === 'alert' && e.kind === 'stopped' ? [e.by] : []));
  assert.equal(stopped(), ['by boss from 10.0.0.5']);
  h.actor.send({ type: 'RESTART' });
  h.proc().started(200);
  h.checkin();
  h.actor.send({ type: 'STOP' });
  h.proc().exit(0);
  assert.equal(stopped(), ['by boss from 10.0.0.5', ''], 'an unknown asker is not the previous one');
});

control('instance :: STOP while running, then RESTART launches again', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'STOP' });
  assert.equal(h.proc().commands, [{ type: 'LEAVE' }]);
  h.proc().exit(0);
  assert.is(h.state(), 'stopped.idle');
  h.actor.send({ type: 'RESTART' });
  assert.is(h.state(), 'server.starting');
  assert.is(h.context().exitIntent, null);
  assert.is(h.processes.length, 2);
});

control('instance :: RESTART while running shuts the server down, then relaunches', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'RESTART' });
  assert.is(h.state(), 'server.stopping');
  assert.equal(h.proc().commands, [{ type: 'STOP_GRACEFULLY', reason: 'Restart requested by the watchdog' }]);
  h.proc().exit(0);
  assert.is(h.state(), 'server.starting');
  assert.equal(h.restarts(), ['request']);
  assert.is(h.context().exitIntent, null);
});

control('instance :: RESTART during a back-off launches now; STOP there goes idle without an alert', async ({ h }) => {
  await crashLoop(h);
  h.actor.send({ type: 'RESTART' });
  assert.is(h.state(), 'server.starting');
  assert.is(h.context().crashStreak, 0);
  h.checkin();
  h.proc().exit(1);
  h.checkin();
  h.proc().exit(1);
  assert.is(h.state(), 'restarting.backoff');
  const alerts = h.alerts().length;
  h.actor.send({ type: 'STOP' });
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.alerts().length, alerts);
  h.clock.increment(TIMING.backoffMaxMs);
  assert.is(h.state(), 'stopped.idle');
});

control('instance :: STOP after RESTART during the shutdown wins; RESTART after STOP relaunches', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'RESTART' });
  h.actor.send({ type: 'STOP' });
  h.proc().exit(0);
  assert.is(h.state(), 'stopped.idle');
  h.actor.send({ type: 'RESTART' });
  h.checkin();
  h.clock.increment(TIMING.checkinTimeoutMs / 2);
  h.clock.increment(TIMING.checkinTimeoutMs / 2); // hang: restarting.stopping
  assert.is(h.state(), 'server.stopping');
  h.actor.send({ type: 'STOP' });
  h.actor.send({ type: 'RESTART' });
  h.proc().exit(null, 'SIGKILL');
  assert.is(h.state(), 'server.starting');
  assert.equal(h.restarts(), ['request'], 'the stopped relaunch was not a restart; the second one was');
});

control.run();

// --- UPDATE_CHECK

const check = harnessSuite('instance update checks');

check(
  'instance :: an update found while running is remembered, not asked for; the relaunch installs it',
  async ({ h }) => {
    await h.run();
    h.actor.send({ type: 'UPDATE_CHECK' });
    assert.is(h.state(), 'server.running');
    assert.equal(h.checks[0]?.input, { key: 'alpha', revision: 'r1' });
    await h.finishCheck(true);
    assert.is(h.state(), 'server.running');
    assert.is(h.context().updatePending, true);
    // When the server leaves is the maintenance region's to say: RoundEnd (the default) asks it once.
    assert.equal(h.proc().commands, [{ type: 'LEAVE' }], 'the maintenance policy asks the server to leave');
    h.proc().exit(0);
    assert.is(h.state(), 'updating');
    assert.equal(h.restarts(), ['update']);
    await h.finishUpdate({ revision: 'r2', changed: true });
    assert.is(h.state(), 'server.starting');
    assert.is(h.context().revision, 'r2');
  },
);

check('instance :: an update found while stopped on request is only remembered', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'STOP' });
  h.proc().exit(0);
  await h.checkUpdate(true);
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.context().updatePending, true);
  assert.is(h.processes.length, 1);
  h.actor.send({ type: 'RESTART' });
  assert.is(h.state(), 'updating');
});

check('instance :: an update found while failing resets the count, installs and launches', async ({ h }) => {
  await h.failing();
  await h.checkUpdate(true);
  assert.is(h.state(), 'updating');
  assert.is(h.context().startupFailures, 0);
  await h.finishUpdate({ revision: 'r2', changed: true });
  assert.is(h.state(), 'server.starting');
  h.proc().exit(1);
  assert.is(h.state(), 'server.starting', 'the new build gets its own three tries');
});

check('instance :: no update while failing leaves it failing', async ({ h }) => {
  await h.failing();
  await h.checkUpdate(false);
  assert.is(h.state(), 'stopped.failing');
  assert.is(h.check(), 'idle');
});

check('instance :: a later "no update" never cancels a pending one', async ({ h }) => {
  await h.run();
  await h.checkUpdate(true);
  await h.checkUpdate(false);
  assert.is(h.context().updatePending, true);
  assert.equal(h.proc().commands, [{ type: 'LEAVE' }], 'asked to leave once, by the maintenance policy');
});

check('instance :: one check at a time; a failed check is reported and changes nothing', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'UPDATE_CHECK' });
  assert.is(h.checks.length, 1);
  await h.failCheck('manifest unreachable');
  assert.is(h.state(), 'server.running');
  assert.ok(h.emitted.some((e) => e.type === 'check-failed' && e.message === 'manifest unreachable'));
  assert.is(h.context().updatePending, false);
  assert.is(h.check(), 'idle');
  assert.is(h.checks.length, 0, 'nothing was queued, so nothing follows');
  h.actor.send({ type: 'UPDATE_CHECK' });
  assert.is(h.checks.length, 1, 'a new check can start after the failed one');
  await h.finishCheck(false);
});

check('instance :: requests during a check are queued: exactly one more check runs after it', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'UPDATE_CHECK' });
  h.actor.send({ type: 'UPDATE_CHECK' });
  h.actor.send({ type: 'UPDATE_CHECK' });
  h.actor.send({ type: 'UPDATE_CHECK' });
  assert.is(h.checks.length, 1, 'never two checks at once');
  assert.is(h.check(), 'running.again');
  await h.finishCheck(false);
  assert.is(h.checks.length, 1, 'the queued check started when the first ended');
  assert.equal(h.checks[0]?.input, { key: 'alpha', revision: 'r1' });
  assert.is(h.check(), 'running.once');
  // The build the requests were about was published after the first check looked: the second one finds it.
  await h.finishCheck(true);
  assert.is(h.checks.length, 0, 'three extra requests made one extra check, not three');
  assert.is(h.check(), 'idle');
  assert.is(h.context().updatePending, true);
  assert.equal(h.proc().commands, [{ type: 'LEAVE' }], 'asked to leave once, by the maintenance policy');
});

check('instance :: a request during a check that fails still gets its check', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'UPDATE_CHECK' });
  h.actor.send({ type: 'UPDATE_CHECK' });
  await h.failCheck('manifest unreachable');
  assert.is(h.checks.length, 1, 'the queued check runs after the failed one');
  await h.finishCheck(true);
  assert.is(h.checks.length, 0);
  assert.is(h.context().updatePending, true);
  assert.equal(h.proc().commands, [{ type: 'LEAVE' }], 'asked to leave once, by the maintenance policy');
});

check(
  'instance :: a check queued while failing runs after the found update is installed, against the new revision',
  async ({ h }) => {
    await h.failing();
    h.actor.send({ type: 'UPDATE_CHECK' });
    await h.checkUpdate(true);
    assert.is(h.state(), 'updating');
    assert.is(
      h.checks.length,
      0,
      'not beside the install: against the old revision it would find the build being installed',
    );
    await h.finishUpdate({ revision: 'r2', changed: true });
    assert.is(h.state(), 'server.starting');
    assert.is(h.checks.length, 1, 'the queued check was not lost in the transition');
    assert.equal(h.checks[0]?.input, { key: 'alpha', revision: 'r2' });
    await h.finishCheck(false);
    assert.is(h.context().updatePending, false, 'the fresh server is not asked to leave for the build it runs');
    assert.equal(h.proc().commands, []);
  },
);

check(
  'instance :: requests during the update before a launch wait for it, then make exactly one check',
  async ({ h }) => {
    h.actor.send({ type: 'START' });
    assert.is(h.state(), 'updating');
    h.actor.send({ type: 'UPDATE_CHECK' });
    h.actor.send({ type: 'UPDATE_CHECK' });
    assert.is(h.checks.length, 0, "no check beside the update's own");
    await h.finishUpdate({ revision: 'r1', changed: false });
    assert.is(h.state(), 'server.starting');
    assert.is(h.checks.length, 1, 'one check once the update is done');
    assert.equal(h.checks[0]?.input, { key: 'alpha', revision: 'r1' });
    await h.finishCheck(false);
    assert.is(h.checks.length, 0);
    assert.is(h.check(), 'idle');
  },
);

check.run();

// --- SHUTDOWN (the daemon exits)

const shutdown = harnessSuite('instance shutdown');

shutdown('instance :: SHUTDOWN with persist detaches from the running server', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'SHUTDOWN', persist: true });
  assert.is(h.state(), 'exited');
  assert.is(h.actor.getSnapshot().status, 'done');
  assert.equal(h.proc().commands, [{ type: 'DETACH' }]);
});

shutdown('instance :: SHUTDOWN without persist shuts the server down and ends once it exits', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'SHUTDOWN', persist: false });
  assert.is(h.state(), 'server.stopping');
  assert.equal(h.proc().commands, [{ type: 'STOP_GRACEFULLY', reason: 'Watchdog stopping' }]);
  h.proc().exit(0);
  assert.is(h.state(), 'exited');
  assert.equal(h.restarts(), []);
  assert.is(h.processes.length, 1);
});

shutdown('instance :: SHUTDOWN during a stop already under way waits for that exit', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'RESTART' });
  h.actor.send({ type: 'SHUTDOWN', persist: false });
  h.proc().exit(0);
  assert.is(h.state(), 'exited');
});

shutdown(
  'instance :: SHUTDOWN with nothing running ends at once; an update in progress is cancelled',
  async ({ h }) => {
    h.actor.send({ type: 'START' });
    const update = h.updates[0];
    h.actor.send({ type: 'SHUTDOWN', persist: false });
    assert.is(h.state(), 'exited');
    assert.is(update?.signal.aborted, true);
    assert.is(h.processes.length, 0);
  },
);

shutdown('instance :: SHUTDOWN with persist and no server sends nothing', ({ h }) => {
  h.actor.send({ type: 'SHUTDOWN', persist: true });
  assert.is(h.state(), 'exited');
});

shutdown.run();
