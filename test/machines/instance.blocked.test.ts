import * as assert from 'uvu/assert';
import type { InstanceEmitted } from '../../machines/instance.types.ts';
import { type Harness, harnessSuite, TIMING } from './_support/harness.ts';

// --- launches blocked by the daemon's resources or a held game port (never the server's fault)

const blocked = harnessSuite('instance blocked launches');

const blockedFacts = (h: Harness) =>
  h.emitted.filter(
    (e): e is Extract<InstanceEmitted, { type: 'launch-blocked' | 'launch-unblocked' }> =>
      e.type === 'launch-blocked' || e.type === 'launch-unblocked',
  );

/** START and the initial update, then the launch is blocked `times` times in a row, each retry waited out. */
async function blockedTimes(h: Harness, times: number, kind: 'resources' | 'port' = 'resources') {
  h.actor.send({ type: 'START' });
  await h.finishUpdate();
  for (let i = 0; i < times; i++) {
    h.proc().blocked(kind, `blocked attempt ${i + 1}`);
    assert.is(h.state(), 'restarting.blocked');
    if (i < times - 1) h.clock.increment(h.emitted.filter((e) => e.type === 'launch-blocked').at(-1)?.retryMs ?? 0);
  }
}

for (const kind of ['resources', 'port'] as const) {
  blocked(`instance :: a launch blocked by ${kind} never reaches stopped.failing`, async ({ h }) => {
    await blockedTimes(h, 12, kind);
    assert.is(h.state(), 'restarting.blocked');
    assert.is(h.context().startupFailures, 0, 'no startup failure is counted');
    assert.equal(h.alerts(), [], 'no failing alert');
    assert.equal(h.restarts(), [], 'a blocked launch is no restart of the server');
    assert.equal(h.context().blocked, { kind, message: 'blocked attempt 12', attempts: 12 });
  });
}

blocked('instance :: the blocked back-off doubles from the initial delay and stops at the cap', async ({ h }) => {
  await blockedTimes(h, 6);
  const waits = blockedFacts(h).flatMap((e) => (e.type === 'launch-blocked' ? [e.retryMs] : []));
  // TIMING: 1 s initial, 8 s cap.
  assert.equal(waits, [1000, 2000, 4000, 8000, 8000, 8000]);
  const launches = h.processes.length;
  h.clock.increment(TIMING.backoffMaxMs - 1);
  assert.is(h.state(), 'restarting.blocked', 'not before its delay');
  assert.is(h.processes.length, launches);
  h.clock.increment(1);
  assert.is(h.state(), 'server.starting', 'relaunched after the delay');
  assert.is(h.processes.length, launches + 1);
});

blocked('instance :: every attempt is a fact, numbered within its episode', async ({ h }) => {
  await blockedTimes(h, 3, 'port');
  assert.equal(
    blockedFacts(h).map((e) => [e.type, e.kind, e.attempts]),
    [
      ['launch-blocked', 'port', 1],
      ['launch-blocked', 'port', 2],
      ['launch-blocked', 'port', 3],
    ],
  );
});

blocked(
  'instance :: recovery: the first spawned launch says so once and a later block starts afresh',
  async ({ h }) => {
    await blockedTimes(h, 2);
    h.clock.increment(2000);
    assert.is(h.state(), 'server.starting');
    h.actor.send({ type: 'PROCESS_STARTED', launchId: h.context().launchId, secret: 's', pid: null });
    assert.is(h.context().blocked?.attempts, 2, 'the secret before the spawn does not end the episode');
    h.proc().started(321);
    assert.is(h.context().blocked, null);
    assert.equal(blockedFacts(h).at(-1), { type: 'launch-unblocked', kind: 'resources', attempts: 2 });
    h.checkin();
    assert.is(h.state(), 'server.running');
    // The server crashes later and its relaunch is blocked: a new episode, from the initial delay.
    h.proc().exit(1);
    h.proc().blocked('resources');
    const last = blockedFacts(h).at(-1);
    assert.equal(last, {
      type: 'launch-blocked',
      kind: 'resources',
      message: 'blocked (resources)',
      attempts: 1,
      retryMs: 1000,
    });
    assert.is(h.context().crashStreak, 1, 'the crash counts as a crash; the block does not');
  },
);

blocked('instance :: STOP from a blocked launch stops and forgets the episode', async ({ h }) => {
  await blockedTimes(h, 2);
  h.actor.send({ type: 'STOP' });
  assert.is(h.state(), 'stopped.idle');
  assert.is(h.context().blocked, null);
  const launches = h.processes.length;
  h.clock.increment(TIMING.backoffMaxMs * 4);
  assert.is(h.state(), 'stopped.idle', 'no timer relaunches a stopped instance');
  assert.is(h.processes.length, launches);
  // The operator's stop stands until a restart (`watchdog start`).
  h.actor.send({ type: 'RESTART' });
  assert.is(h.state(), 'server.starting');
  h.proc().blocked('port');
  assert.equal(
    blockedFacts(h).at(-1),
    { type: 'launch-blocked', kind: 'port', message: 'blocked (port)', attempts: 1, retryMs: 1000 },
    'a new episode after the stop',
  );
});

blocked('instance :: RESTART from a blocked launch tries at once and keeps counting the episode', async ({ h }) => {
  await blockedTimes(h, 3);
  const launches = h.processes.length;
  h.actor.send({ type: 'RESTART' });
  assert.is(h.state(), 'server.starting');
  assert.is(h.processes.length, launches + 1);
  h.proc().blocked('resources');
  assert.is(h.context().blocked?.attempts, 4);
});

blocked('instance :: a STOP given while the launch was under way wins over the block', async ({ h }) => {
  h.actor.send({ type: 'START' });
  await h.finishUpdate();
  h.actor.send({ type: 'STOP' });
  h.proc().blocked('resources');
  assert.is(h.state(), 'stopped.idle');
  assert.equal(
    blockedFacts(h).filter((e) => e.type === 'launch-blocked'),
    [],
    'no "retrying" is said for a launch nobody retries',
  );
});

blocked('instance :: a block of an older launch is ignored', async ({ h }) => {
  await h.run();
  const old = h.proc();
  h.proc().exit(1);
  old.blocked('resources');
  assert.is(h.state(), 'server.starting');
  assert.is(h.context().blocked, null);
});

blocked('instance :: after startup failures, blocked launches neither add to them nor give up', async ({ h }) => {
  await h.launch();
  h.proc().exit(1);
  h.proc().exit(1);
  assert.is(h.context().startupFailures, 2);
  for (let i = 0; i < 5; i++) {
    h.proc().blocked('resources');
    assert.is(h.state(), 'restarting.blocked');
    h.clock.increment(TIMING.backoffMaxMs);
  }
  assert.is(h.context().startupFailures, 2);
  h.proc().started(400);
  h.checkin();
  assert.is(h.state(), 'server.running');
  assert.equal(h.alerts(), []);
});

blocked('instance :: ROLLBACK while blocked is refused with the reason', async ({ h }) => {
  await blockedTimes(h, 1);
  assert.match(h.refusal('rollback') ?? '', /blocked/);
  h.actor.send({ type: 'ROLLBACK' });
  assert.is(h.state(), 'restarting.blocked');
  assert.is(h.rollbacks.length, 0);
});

blocked.run();
