import * as assert from 'uvu/assert';
import { crashLoop, createHarness, type Harness, harnessSuite, TIMING } from './_support/harness.ts';

// --- exits before a first check-in

const startup = harnessSuite('instance startup failures');

startup('instance :: three exits before a check-in give up with exactly one alert', async ({ h }) => {
  await h.launch();
  h.proc().exit(1);
  assert.is(h.state(), 'server.starting');
  h.proc().exit(2);
  assert.is(h.state(), 'server.starting');
  h.proc().exit(3);
  assert.is(h.state(), 'stopped.failing');
  assert.equal(h.alerts(), ['failing']);
  assert.equal(h.alert('failing'), { exit: { code: 3, signal: null }, detail: null, failures: 3, backoffMs: null });
  assert.equal(h.restarts(), ['startup-failure', 'startup-failure']);
  assert.is(h.processes.length, 3);
  assert.ok(h.processes.every((p) => p.stopped));
  // Giving up is final until someone acts: no timer relaunches it.
  h.clock.increment(TIMING.backoffMaxMs * 10);
  assert.is(h.state(), 'stopped.failing');
});

startup('instance :: a spawn failure counts as a startup failure instead of idling forever', async ({ h }) => {
  await h.launch();
  h.proc().spawnFailed();
  h.proc().spawnFailed();
  h.proc().spawnFailed();
  assert.is(h.state(), 'stopped.failing');
  assert.equal(h.context().lastExit, {
    code: null,
    signal: null,
    reason: 'launch-failed',
    detail: 'cannot launch /srv/bin/server: ENOENT (file not found) — check RunCommand',
  });
  assert.equal(h.alerts(), ['failing']);
  assert.match(h.alert('failing')?.detail ?? '', /check RunCommand$/, 'chat hears why');
  // No server ran: retried, but no restart is counted.
  assert.equal(h.restarts(), []);
  assert.is(h.context().restarts, 0);
});

startup(
  'instance :: the last line of a server that failed unasked is the detail; a requested exit has none',
  async ({ h }) => {
    await h.launch();
    h.proc().exit(1, null, 'Error: listen EADDRINUSE: address already in use 127.0.0.1:1212');
    assert.equal(h.context().lastExit, {
      code: 1,
      signal: null,
      reason: 'crash',
      detail: 'Error: listen EADDRINUSE: address already in use 127.0.0.1:1212',
    });
    h.proc().exit(0, null, 'bye');
    assert.is(h.context().lastExit?.detail, null, 'a clean exit: its last line is no reason');
    h.checkin();
    h.actor.send({ type: 'RESTART' });
    h.proc().exit(0, null, 'Goodbye.');
    assert.equal(h.context().lastExit, { code: 0, signal: null, reason: 'restart', detail: null });
  },
);

startup('instance :: RESTART from failing clears the count and launches', async ({ h }) => {
  await h.failing();
  h.actor.send({ type: 'RESTART' });
  assert.is(h.state(), 'server.starting');
  assert.is(h.context().startupFailures, 0);
  h.proc().exit(1);
  assert.is(h.state(), 'server.starting', 'one more failure does not give up again at once');
});

startup(
  'instance :: the first check-in has its whole time from the spawn, however long the launch took',
  async ({ h }) => {
    const timeout = h.context().timing.checkinTimeoutMs;
    h.actor.send({ type: 'START' });
    await h.finishUpdate();
    // The launch's preparation takes most of the time (a starved machine) before the process is spawned.
    h.clock.increment(timeout - 10);
    h.proc().started(100);
    h.clock.increment(timeout - 10);
    assert.is(h.state(), 'server.starting', 'not killed before its time from the spawn');
    assert.not.ok(h.proc().commands.some((c) => c.type === 'KILL'));
    h.clock.increment(20);
    assert.ok(
      h.proc().commands.some((c) => c.type === 'KILL'),
      'killed once the time from the spawn is up',
    );
  },
);

startup('instance :: a launch that never spawns is still bounded by the first check-in time', async ({ h }) => {
  const timeout = h.context().timing.checkinTimeoutMs;
  h.actor.send({ type: 'START' });
  await h.finishUpdate();
  h.clock.increment(timeout);
  assert.ok(h.proc().commands.some((c) => c.type === 'KILL'));
});

startup('instance :: a check-in resets the startup failure count', async ({ h }) => {
  await h.launch();
  h.proc().exit(1);
  h.proc().exit(1);
  assert.is(h.context().startupFailures, 2);
  h.checkin();
  assert.is(h.context().startupFailures, 0);
  h.proc().exit(0);
  h.proc().exit(1);
  h.proc().exit(1);
  assert.is(h.state(), 'server.starting');
  assert.equal(h.alerts(), []);
});

startup('instance :: a failing runProcess actor is an exit, not a dead instance', async ({ h }) => {
  await h.run();
  h.proc().fail();
  assert.is(h.state(), 'server.starting');
  assert.equal(h.context().lastExit, { code: null, signal: null, reason: 'crash', detail: null });
  // An unknown exit status is not a clean one.
  assert.equal(h.restarts(), ['crash']);
  h.proc().fail();
  assert.is(h.state(), 'server.starting');
  assert.is(h.context().startupFailures, 1);
});

startup('instance :: a late failure report from an earlier process actor is dropped', async ({ h }) => {
  await h.run();
  h.proc().exit(0);
  const current = h.proc();
  // The error event XState relays from a failed child; a test can only forge it, hence the cast.
  h.actor.send({ type: 'xstate.error.actor.process', error: new Error('late') } as never);
  assert.is(h.state(), 'server.starting');
  assert.is(current.stopped, false);
  assert.is(h.context().startupFailures, 0);
});

startup.run();

// --- crashes after a check-in

const crash = harnessSuite('instance crash loops');

crash('instance :: a crash after a check-in alerts and relaunches at once', async ({ h }) => {
  await h.run();
  h.proc().exit(null, 'SIGSEGV');
  assert.is(h.state(), 'server.starting');
  assert.equal(h.alerts(), ['crash']);
  assert.equal(h.restarts(), ['crash']);
  assert.is(h.context().restarts, 1);
  assert.equal(h.alert('crash'), {
    exit: { code: null, signal: 'SIGSEGV' },
    detail: null,
    failures: 1,
    backoffMs: null,
  });
});

crash('instance :: a crash loop alerts once and backs off, doubling up to the cap', async ({ h }) => {
  await h.run();
  h.proc().exit(1);
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    h.checkin();
    h.proc().exit(1);
    assert.is(h.state(), 'restarting.backoff');
    // Find the wait by stepping the clock: no launch one millisecond early, a launch on time.
    const before = h.processes.length;
    let waited = 0;
    while (h.processes.length === before && waited < 100_000) {
      h.clock.increment(250);
      waited += 250;
    }
    waits.push(waited);
    assert.is(h.state(), 'server.starting');
  }
  assert.equal(waits, [1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  assert.equal(h.alerts(), ['crash', 'crash-loop']);
  assert.equal(h.alert('crash-loop'), { exit: { code: 1, signal: null }, detail: null, failures: 2, backoffMs: 1_000 });
  assert.is(h.context().crashStreak, 7);
  assert.is(h.context().restarts, 7);
});

crash('instance :: a stable run ends the loop: the next crash alerts and relaunches at once', async ({ h }) => {
  await crashLoop(h);
  h.clock.increment(1_000);
  h.checkin();
  // Keep checking in until the run has lasted stableRunMs.
  for (let t = 0; t < TIMING.stableRunMs; t += 4_000) {
    h.clock.increment(4_000);
    h.checkin();
  }
  assert.is(h.context().crashStreak, 0);
  h.proc().exit(1);
  assert.is(h.state(), 'server.starting');
  assert.equal(h.alerts(), ['crash', 'crash-loop', 'crash']);
});

crash('instance :: a run shorter than stableRunMs does not end the loop', async ({ h }) => {
  await h.crashedOnce();
  h.clock.increment(4_000);
  h.checkin();
  h.proc().exit(1);
  assert.is(h.state(), 'restarting.backoff');
  assert.is(h.context().crashStreak, 2);
});

crash('instance :: a clean exit after a check-in relaunches at once without an alert', async ({ h }) => {
  await h.run();
  h.proc().exit(0);
  assert.is(h.state(), 'server.starting');
  assert.equal(h.restarts(), ['exit']);
  assert.equal(h.alerts(), []);
  assert.is(h.updates.length, 0, 'no update is due, so none runs');
});

crash.run();

// --- hangs: a hang loop is a loop

const hangs = harnessSuite('instance hang loops');

/** Lets the current server miss its check-ins until the machine kills it, then reports the kill. */
function hangAndDie(h: Harness): void {
  const before = h.proc();
  const timeout = h.context().timing.checkinTimeoutMs;
  // Degraded at half the timeout, killed at the end (two timers, one after the other).
  h.clock.increment(Math.floor(timeout / 2));
  h.clock.increment(timeout - Math.floor(timeout / 2));
  const kill = before.commands.find((c) => c.type === 'KILL');
  assert.ok(kill, 'the hung server is killed');
  before.exit(null, 'SIGKILL');
}

/** How many hang kills asked for a dump, across every server so far. */
const hangDumps = (h: Harness): number =>
  h.processes.flatMap((p) => p.commands).filter((c) => c.type === 'KILL' && c.reason === 'hang' && c.dump).length;

/** Steps the clock until the next launch; the wait. */
function waitForLaunch(h: Harness): number {
  const before = h.processes.length;
  let waited = 0;
  while (h.processes.length === before && waited < 100_000) {
    h.clock.increment(250);
    waited += 250;
  }
  return waited;
}

hangs(
  'instance :: a server that hangs after each check-in backs off like a crash loop, told twice, dumped once',
  async ({ h }) => {
    await h.run();
    hangAndDie(h);
    assert.is(h.state(), 'server.starting', 'the first hang relaunches at once');
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      h.checkin();
      hangAndDie(h);
      assert.is(h.state(), 'restarting.backoff');
      waits.push(waitForLaunch(h));
    }
    assert.equal(waits, [1_000, 2_000, 4_000, 8_000, 8_000]);
    assert.equal(h.alerts(), ['hang', 'hang-loop']);
    assert.equal(h.alert('hang-loop'), { exit: null, detail: null, failures: 2, backoffMs: 1_000 });
    assert.is(hangDumps(h), 1, 'one dump per loop');
    assert.equal(h.context().lastExit, { code: null, signal: 'SIGKILL', reason: 'hang', detail: null });
    assert.ok(h.restarts().every((r) => r === 'hang'));
  },
);

hangs(
  'instance :: a hang loop relaunch that hangs before its check-in is the same loop: not told, not dumped again',
  async ({ h }) => {
    await h.run();
    hangAndDie(h);
    assert.is(h.state(), 'server.starting');
    // The relaunch misses its first check-in (a starved machine): killed without a second alert or dump.
    hangAndDie(h);
    assert.is(h.context().startupFailures, 1);
    // The next relaunch checks in and hangs: the second hang after check-ins makes it a loop.
    h.checkin();
    hangAndDie(h);
    assert.equal(h.alerts(), ['hang', 'hang-loop']);
    assert.is(hangDumps(h), 1, 'one dump per loop');
    assert.ok(h.restarts().every((r) => r === 'hang'));
  },
);

hangs('instance :: a stable run ends a hang loop: the next hang is told and dumped again', async ({ h }) => {
  await h.run();
  hangAndDie(h);
  h.checkin();
  hangAndDie(h);
  assert.is(h.state(), 'restarting.backoff');
  waitForLaunch(h);
  h.checkin();
  for (let t = 0; t < TIMING.stableRunMs; t += 4_000) {
    h.clock.increment(4_000);
    h.checkin();
  }
  assert.is(h.context().crashStreak, 0);
  hangAndDie(h);
  assert.is(h.state(), 'server.starting');
  assert.equal(h.alerts(), ['hang', 'hang-loop', 'hang']);
  assert.is(hangDumps(h), 2);
});

hangs('instance :: a run overdue when stableRunMs is up is not stable: the loop goes on', async ({ h }) => {
  h = createHarness({ checkinTimeoutMs: 100_000 });
  try {
    await h.run();
    hangAndDie(h);
    h.checkin();
    // The only check-in; the STABLE timer (60 s) fires while the check-in is overdue (after 50 s).
    hangAndDie(h);
    assert.is(h.state(), 'restarting.backoff');
    assert.equal(h.alerts(), ['hang', 'hang-loop']);
  } finally {
    h.stop();
  }
});

hangs(
  'instance :: a server that never checks in: each hang kill is a startup failure, the third gives up',
  async ({ h }) => {
    await h.launch();
    hangAndDie(h);
    assert.is(h.state(), 'server.starting');
    assert.is(h.context().startupFailures, 1);
    hangAndDie(h);
    hangAndDie(h);
    assert.is(h.state(), 'stopped.failing');
    assert.equal(h.alerts(), ['hang', 'failing']);
    assert.equal(h.restarts(), ['hang', 'hang']);
    assert.is(hangDumps(h), 1);
    assert.equal(h.context().lastExit, { code: null, signal: 'SIGKILL', reason: 'hang', detail: null });
  },
);

hangs(
  'instance :: a crash then hangs is one loop: the crash and the first hang told, one loop alert, one dump',
  async ({ h }) => {
    await h.crashedOnce();
    hangAndDie(h);
    assert.is(h.state(), 'restarting.backoff');
    waitForLaunch(h);
    h.checkin();
    hangAndDie(h);
    assert.equal(h.alerts(), ['crash', 'hang', 'crash-loop']);
    assert.is(hangDumps(h), 1);
  },
);

hangs('instance :: lastExit names why the last server went', async ({ h }) => {
  await h.run();
  h.actor.send({ type: 'RESTART' });
  h.proc().exit(0);
  assert.equal(h.context().lastExit, { code: 0, signal: null, reason: 'restart', detail: null });
  h.checkin();
  h.proc().exit(2);
  assert.equal(h.context().lastExit, { code: 2, signal: null, reason: 'crash', detail: null });
  h.checkin();
  h.actor.send({ type: 'STOP' });
  h.proc().exit(0);
  assert.equal(h.context().lastExit, { code: 0, signal: null, reason: 'stop', detail: null });
});

hangs.run();

// --- a new build

const build = harnessSuite('instance new builds');

build('instance :: a pending update is tried before giving up', async ({ h }) => {
  await h.launch();
  h.proc().exit(1);
  h.proc().exit(1);
  // An update found meanwhile is installed before the next launch, even after the last allowed failure.
  await h.checkUpdate(true);
  h.proc().exit(1);
  assert.is(h.state(), 'updating');
  assert.is(h.context().startupFailures, 3);
  assert.equal(h.alerts(), []);
  // The same build again: the next failure gives up.
  await h.finishUpdate({ revision: 'r1', changed: false });
  h.proc().exit(1);
  assert.is(h.state(), 'stopped.failing');
  assert.equal(h.alerts(), ['failing']);
});

build('instance :: an update that installs a new build resets the count before the launch', async ({ h }) => {
  await h.launch();
  h.proc().exit(1);
  await h.checkUpdate(true);
  h.proc().exit(1);
  assert.is(h.state(), 'updating', 'the relaunch goes through the pending update');
  assert.is(h.context().startupFailures, 2);
  await h.finishUpdate({ revision: 'r2', changed: true });
  assert.is(h.context().startupFailures, 0);
  h.proc().exit(1);
  assert.is(h.state(), 'server.starting', 'one failure of the new build does not give up');
  h.proc().exit(1);
  h.proc().exit(1);
  assert.is(h.state(), 'stopped.failing');
});

build('instance :: an update that changed nothing keeps the count', async ({ h }) => {
  await h.launch();
  h.proc().exit(1);
  await h.checkUpdate(true);
  h.proc().exit(1);
  await h.finishUpdate({ revision: 'r1', changed: false });
  assert.is(h.context().startupFailures, 2);
  h.proc().exit(1);
  assert.is(h.state(), 'stopped.failing');
});

build.run();
