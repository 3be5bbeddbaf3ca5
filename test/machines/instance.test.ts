import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { backoffMs } from '../../machines/instance.context.ts';
import { harnessSuite, TIMING } from './_support/harness.ts';

// --- launch: update first, then the process

const launch = harnessSuite('instance launch');

launch('instance :: starts idle, owning nothing, with an update pending', ({ h }) => {
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.context().updatePending, true);
  assert.is(h.processes.length, 0);
  assert.is(h.updates.length, 0);
});

launch('instance :: START checks for an update, then launches the installed revision', async ({ h }) => {
  h.actor.send({ type: 'START' });
  assert.is(h.state(), 'updating');
  assert.equal(h.updates[0]?.input, { key: 'alpha', revision: 'r1' });
  await h.finishUpdate({ revision: 'r2', changed: true });
  assert.is(h.state(), 'server.starting');
  assert.is(h.context().revision, 'r2');
  assert.is(h.context().updatePending, false);
  assert.equal(h.proc().input, { key: 'alpha', launchId: 1, adoptPid: null });
  assert.equal(h.emitted.at(-1), { type: 'launch', launchId: 1 });
});

launch('instance :: a failed update is reported and the old build starts', async ({ h }) => {
  h.actor.send({ type: 'START' });
  await h.failUpdate('CDN down');
  assert.is(h.state(), 'server.starting');
  assert.is(h.context().revision, 'r1');
  assert.ok(h.emitted.some((e) => e.type === 'update-failed' && e.message === 'CDN down'));
  assert.is(h.processes.length, 1);
});

launch('instance :: STOP during the update lets it finish, then stays stopped', async ({ h }) => {
  h.actor.send({ type: 'START' });
  h.actor.send({ type: 'STOP' });
  assert.is(h.state(), 'updating');
  await h.finishUpdate({ revision: 'r2', changed: true });
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.context().revision, 'r2');
  assert.is(h.processes.length, 0);
});

launch('instance :: STOP during a failing update also ends idle', async ({ h }) => {
  h.actor.send({ type: 'START' });
  h.actor.send({ type: 'STOP' });
  await h.failUpdate();
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.processes.length, 0);
});

launch('instance :: RESTART during the update withdraws an earlier STOP', async ({ h }) => {
  h.actor.send({ type: 'START' });
  h.actor.send({ type: 'STOP' });
  h.actor.send({ type: 'RESTART' });
  await h.finishUpdate();
  assert.is(h.state(), 'server.starting');
});

launch('instance :: the first check-in runs the server and records its pid', async ({ h }) => {
  await h.launch(4321);
  assert.is(h.context().pid, 4321);
  assert.is(h.context().checkedIn, false);
  h.checkin();
  assert.is(h.state(), 'server.running');
  assert.is(h.context().checkedIn, true);
  assert.equal(h.emitted.at(-1), { type: 'checkin', launchId: 1 });
});

launch('instance :: ADOPT watches a live server without launching or updating', ({ h }) => {
  h.actor.send({ type: 'ADOPT', pid: 777 });
  assert.is(h.state(), 'server.running');
  assert.equal(h.proc().input, { key: 'alpha', launchId: 1, adoptPid: 777 });
  assert.is(h.context().pid, 777);
  assert.is(h.context().checkedIn, true);
  assert.is(h.updates.length, 0);
  // The update that was due at daemon start happens before the next launch.
  h.proc().exit(0);
  assert.is(h.state(), 'updating');
  assert.equal(h.restarts(), ['update']);
});

launch.run();

// --- check-ins and hangs

const hang = harnessSuite('instance check-ins');

hang('instance :: no check-in within the timeout after launch is a hang', async ({ h }) => {
  await h.launch();
  h.clock.increment(TIMING.checkinTimeoutMs - 1);
  assert.is(h.state(), 'server.starting');
  h.clock.increment(1);
  assert.is(h.state(), 'server.stopping');
  assert.equal(h.alerts(), ['hang']);
  assert.equal(h.proc().commands, [{ type: 'KILL', reason: 'hang', dump: true }]);
  h.proc().exit(null, 'SIGKILL');
  assert.is(h.state(), 'server.starting');
  assert.equal(h.restarts(), ['hang']);
  // A server that never checked in failed to start, whoever killed it (the real watchdog counts it the same way).
  assert.is(h.context().startupFailures, 1);
  assert.is(h.processes.length, 2);
  assert.is(h.processes[0]?.stopped, true);
});

hang('instance :: half the timeout without a check-in is degraded, the other half a hang', async ({ h }) => {
  await h.run();
  h.clock.increment(TIMING.checkinTimeoutMs / 2);
  assert.is(h.state(), 'server.awaiting-checkin');
  h.checkin();
  assert.is(h.state(), 'server.running');
  h.clock.increment(TIMING.checkinTimeoutMs / 2);
  assert.is(h.state(), 'server.awaiting-checkin');
  h.clock.increment(TIMING.checkinTimeoutMs / 2);
  assert.is(h.state(), 'server.stopping');
  assert.equal(h.alerts(), ['hang']);
  assert.equal(h.proc().commands, [{ type: 'KILL', reason: 'hang', dump: true }]);
});

hang('instance :: every check-in while running restarts the timer', async ({ h }) => {
  await h.run();
  for (let i = 0; i < 5; i++) {
    h.clock.increment(TIMING.checkinTimeoutMs / 2 - 1);
    h.checkin();
  }
  assert.is(h.state(), 'server.running');
  assert.equal(h.alerts(), []);
});

hang('instance :: a stale check-in from an older launch is ignored', async ({ h }) => {
  await h.launch();
  h.proc().exit(1);
  assert.is(h.context().launchId, 2);
  h.actor.send({ type: 'CHECKIN', launchId: 1 });
  assert.is(h.state(), 'server.starting');
  h.clock.increment(TIMING.checkinTimeoutMs);
  assert.is(h.state(), 'server.stopping');
});

hang('instance :: a stale exit from an older launch never touches the newer one', async ({ h }) => {
  await h.run();
  const first = h.proc();
  h.actor.send({ type: 'RESTART' });
  first.exit(0);
  assert.is(h.state(), 'server.starting');
  const second = h.proc();
  first.exit(1); // ignored by the stopped child already; and even if it were delivered:
  h.actor.send({ type: 'PROCESS_EXITED', launchId: 1, code: 1, signal: null });
  h.actor.send({ type: 'PROCESS_STARTED', launchId: 1, secret: 'old', pid: 1 });
  assert.is(h.state(), 'server.starting');
  assert.is(second.stopped, false);
  assert.is(h.context().startupFailures, 0);
  assert.is(h.context().pid, null);
});

hang('instance :: a stop is escalated by the process actor alone: the machine waits for the exit', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'RESTART' });
  assert.equal(h.proc().commands, [{ type: 'STOP_GRACEFULLY', reason: 'Restart requested by the watchdog' }]);
  h.clock.increment(TIMING.checkinTimeoutMs * 10);
  assert.is(h.state(), 'server.stopping');
  assert.equal(h.proc().commands.length, 1, 'no second command from a timer of its own');
  h.proc().exit(null, 'SIGKILL');
  assert.is(h.state(), 'server.starting');
});

hang('instance :: CONFIG changes the timeout from the next timer armed', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'CONFIG', timing: { ...TIMING, checkinTimeoutMs: 2_000 } });
  h.checkin();
  h.clock.increment(1_000);
  assert.is(h.state(), 'server.awaiting-checkin');
  h.clock.increment(1_000);
  assert.is(h.state(), 'server.stopping');
});

hang.run();

// --- back-off arithmetic

const backoff = suite('instance backoff');
backoff('instance :: back-off doubles from the initial delay and stops at the cap', () => {
  assert.equal(
    [2, 3, 4, 5, 6, 9].map((n) => backoffMs(TIMING, n)),
    [1_000, 2_000, 4_000, 8_000, 8_000, 8_000],
  );
});
backoff.run();
