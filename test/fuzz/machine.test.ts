/**
 * Fuzzing the instance statechart (machines/instance.ts) on its test harness (test/machines/harness.ts: simulated
 * clock, hand-operated fake actors) with random sequences of everything that can happen to an instance: daemon
 * start or adoption, control requests, check-ins, process starts and exits of the current launch and of older ones,
 * a failing process actor, update, check and rollback results, config reloads, clock advances and the daemon's
 * shutdown. After every step:
 * - at most one server process is held, and exactly one (of the current launch) while the machine owns a server;
 * - an event of an older launch (a late check-in, start or exit) changes nothing: same state, same context,
 *   nothing emitted;
 * - the machine never errors.
 */
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { InstanceTiming } from '../../machines/instance.types.ts';
import { createHarness, type FakeProcess, type Harness } from '../machines/_support/harness.ts';
import { fuzz } from './_support/fuzz.ts';

/** Status paths of the states inside `owning`, where the machine holds a server process. */
const OWNING = new Set(['server.starting', 'server.running', 'server.awaiting-checkin', 'server.stopping']);

type Step =
  | { t: 'START' | 'RESTART' | 'STOP' | 'UPDATE_CHECK' | 'ROLLBACK' }
  | { t: 'ADOPT'; pid: number }
  | { t: 'SHUTDOWN'; persist: boolean }
  | { t: 'CONFIG'; timing: InstanceTiming }
  /** `back` launches before the current one: 0 is the current launch, more is an older one. */
  | { t: 'CHECKIN'; back: number }
  | { t: 'STARTED'; back: number; pid: number | null }
  | { t: 'EXITED'; back: number; code: number | null; signal: string | null }
  /** The launch was blocked (the daemon's descriptors, a held game port): no process ran. */
  | { t: 'BLOCKED'; back: number; kind: 'resources' | 'port' }
  | { t: 'ACTOR_FAILS' }
  | { t: 'ADVANCE'; ms: number }
  | { t: 'UPDATE_DONE'; changed: boolean }
  | { t: 'UPDATE_FAILS' }
  | { t: 'CHECK_DONE'; available: boolean }
  | { t: 'CHECK_FAILS' }
  | { t: 'ROLLBACK_DONE' }
  | { t: 'ROLLBACK_FAILS' };

const back = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
);

const timing: fc.Arbitrary<InstanceTiming> = fc.record({
  checkinTimeoutMs: fc.constantFrom(1, 2, 1_000, 10_000),
  backoffInitialMs: fc.constantFrom(0, 1_000),
  backoffMaxMs: fc.constantFrom(0, 8_000),
  stableRunMs: fc.constantFrom(1, 60_000),
  startupFailureLimit: fc.constantFrom(1, 3),
});

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom<Step>({ t: 'START' }, { t: 'RESTART' }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Step>(
      { t: 'STOP' },
      { t: 'UPDATE_CHECK' },
      { t: 'ROLLBACK' },
      { t: 'ACTOR_FAILS' },
      { t: 'UPDATE_FAILS' },
      { t: 'CHECK_FAILS' },
      { t: 'ROLLBACK_DONE' },
      { t: 'ROLLBACK_FAILS' },
    ),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('ADOPT' as const), pid: fc.integer({ min: 2, max: 99 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('CONFIG' as const), timing }) },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('CHECKIN' as const), back }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('STARTED' as const),
      back,
      pid: fc.option(fc.integer({ min: 2, max: 99 }), { nil: null }),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('EXITED' as const),
      back,
      code: fc.constantFrom(0, 1, null),
      signal: fc.constantFrom(null, 'SIGKILL', 'SIGTERM'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('BLOCKED' as const), back, kind: fc.constantFrom('resources', 'port') }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('ADVANCE' as const), ms: fc.constantFrom(1, 499, 5_000, 60_001) }),
  },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('UPDATE_DONE' as const), changed: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('CHECK_DONE' as const), available: fc.boolean() }) },
);

const crash: Step = { t: 'EXITED', back: 0, code: 1, signal: null };
const checkin: Step = { t: 'CHECKIN', back: 0 };
const running: Step[] = [{ t: 'START' }, { t: 'UPDATE_DONE', changed: false }, checkin];

/**
 * Where a sequence starts: from scratch, or from a state random steps reach only rarely (a running server, a crash
 * loop in back-off, a server left running by the last daemon, an instance that gave up on startup failures).
 */
const prefix = fc.constantFrom<Step[]>(
  [],
  running,
  [...running, crash, checkin, crash],
  [{ t: 'ADOPT', pid: 42 }],
  [{ t: 'START' }, { t: 'UPDATE_DONE', changed: false }, crash, crash, crash],
);

/** Steps after the prefix, now and then ending with the daemon's shutdown (the machine's final state). */
const scenario = fc.tuple(
  prefix,
  fc.array(step, { minLength: 1, maxLength: 50 }),
  fc.option(fc.boolean(), { nil: undefined, freq: 4 }),
);

/** What a stale event must leave exactly as it was. */
function observe(h: Harness): string {
  const snap = h.actor.getSnapshot();
  return JSON.stringify({ value: snap.value, context: snap.context, emitted: h.emitted.length });
}

/**
 * Process actors that failed. XState never runs a failed callback actor's cleanup, so the harness never sees them
 * stopped, and the machine cannot reach them either: the real runProcess therefore never fails on a command (it
 * kills its server instead; run-process-failure.test.ts). A failed one counts as gone here.
 */
type Failed = Set<FakeProcess>;

/** One step; answers to updates, checks and rollbacks apply only when one is pending. */
async function apply(h: Harness, s: Step, failed: Failed): Promise<void> {
  const launchId = (n: number) => h.context().launchId - n;
  switch (s.t) {
    case 'START':
    case 'RESTART':
    case 'STOP':
    case 'UPDATE_CHECK':
    case 'ROLLBACK':
      return h.actor.send({ type: s.t });
    case 'ADOPT':
      return h.actor.send({ type: 'ADOPT', pid: s.pid });
    case 'SHUTDOWN':
      return h.actor.send({ type: 'SHUTDOWN', persist: s.persist });
    case 'CONFIG':
      return h.actor.send({ type: 'CONFIG', timing: s.timing });
    case 'CHECKIN':
      return h.actor.send({ type: 'CHECKIN', launchId: launchId(s.back) });
    case 'STARTED':
      return h.actor.send({
        type: 'PROCESS_STARTED',
        launchId: launchId(s.back),
        secret: `secret-${launchId(s.back)}`,
        pid: s.pid,
      });
    case 'EXITED':
      return h.actor.send({ type: 'PROCESS_EXITED', launchId: launchId(s.back), code: s.code, signal: s.signal });
    case 'BLOCKED':
      return h.actor.send({
        type: 'PROCESS_BLOCKED',
        launchId: launchId(s.back),
        kind: s.kind,
        message: `blocked (${s.kind})`,
      });
    case 'ACTOR_FAILS': {
      const held = h.processes.filter((p) => !p.stopped && !failed.has(p)).at(-1);
      if (!held) return;
      failed.add(held);
      return held.fail();
    }
    case 'ADVANCE':
      return h.clock.increment(s.ms);
    case 'UPDATE_DONE':
      if (h.updates.length > 0) await h.finishUpdate({ revision: s.changed ? 'r2' : 'r1', changed: s.changed });
      return;
    case 'UPDATE_FAILS':
      if (h.updates.length > 0) await h.failUpdate();
      return;
    case 'CHECK_DONE':
      if (h.checks.length > 0) await h.finishCheck(s.available);
      return;
    case 'CHECK_FAILS':
      if (h.checks.length > 0) await h.failCheck();
      return;
    case 'ROLLBACK_DONE':
      if (h.rollbacks.length > 0) await h.finishRollback();
      return;
    case 'ROLLBACK_FAILS':
      if (h.rollbacks.length > 0) await h.failRollback();
      return;
  }
}

function checkInvariants(h: Harness, trail: Step[], failed: Failed): void {
  const where = () => `after ${JSON.stringify(trail)}`;
  assert.equal(h.errors, [], `the machine errored ${where()}`);
  const held = h.processes.filter((p) => !p.stopped && !failed.has(p));
  const state = h.state();
  if (OWNING.has(state)) {
    assert.is(held.length, 1, `one server process in ${state} ${where()}`);
    assert.is(held[0]?.input.launchId, h.context().launchId, `the held process is the current launch ${where()}`);
  } else {
    assert.is(held.length, 0, `no server process in ${state} ${where()}`);
  }
}

const machine = suite('fuzz/instance machine');

machine('fuzz/machine :: random event sequences keep one process at most and ignore older launches', async () => {
  const reached = new Set<string>();
  await fuzz(
    'machine/sequences',
    fc.asyncProperty(scenario, async ([first, steps, shutdown]) => {
      const h = createHarness();
      const trail: Step[] = [];
      const failed: Failed = new Set();
      try {
        const all: Step[] = [
          ...first,
          ...steps,
          ...(shutdown === undefined ? [] : [{ t: 'SHUTDOWN', persist: shutdown } as const]),
        ];
        for (const s of all) {
          trail.push(s);
          const stale = 'back' in s && s.back > 0;
          const before = stale ? observe(h) : '';
          await apply(h, s, failed);
          if (stale)
            assert.is(observe(h), before, `an event of an older launch changed something ${JSON.stringify(trail)}`);
          checkInvariants(h, trail, failed);
          reached.add(h.state());
        }
      } finally {
        h.stop();
      }
    }),
    { seed: 0x57a7e_01, numRuns: 300 },
  );
  // The sequences must drive the machine through its states, or the invariants above were checked on too little.
  for (const state of [
    'server.running',
    'server.awaiting-checkin',
    'server.stopping',
    'restarting.backoff',
    'restarting.blocked',
    'stopped.failing',
    'updating',
    'rolling-back',
    'exited',
  ]) {
    assert.ok(reached.has(state), `never reached ${state}: ${[...reached].join(', ')}`);
  }
});

machine.run();
