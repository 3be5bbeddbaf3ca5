/**
 * Model-based test: xstate/graph explores the machine over every event type it declares (payloads attached),
 * and for every declared transition one shortest path that takes it is executed against the real machine
 * with fake actors on a simulated clock. Coverage is measured on the execution, not on the traversal.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type {
  ActorLogic,
  ActorScope,
  AnyStateNode,
  AnyTransitionDefinition,
  InspectionEvent,
  SnapshotFrom,
} from 'xstate';
import { transition } from 'xstate';
import { type DirectedGraphNode, type StatePath, TestModel, toDirectedGraph } from 'xstate/graph';
import { backoffMs, type InstanceMachineEvent } from '../../machines/instance.context.ts';
import { BUSY_REASONS, CONTROL_ACTIONS, CONTROL_EVENT, refusalOf } from '../../machines/instance.refusals.ts';
import { instanceMachine } from '../../machines/instance.ts';
import type {
  CheckOutput,
  InstanceInput,
  MaintenanceRules,
  RestoreOutput,
  RollbackOutput,
  SavedMaintenance,
  UpdateOutput,
} from '../../machines/instance.types.ts';
import { createHarness, type Harness, stampAt, TIMING } from './_support/harness.ts';

type Snap = SnapshotFrom<typeof instanceMachine>;
/** The declared events plus XState's own: actor results and timers, which the executor produces for real. */
type ModelEvent =
  | InstanceMachineEvent
  | { type: 'xstate.done.actor.update'; output: UpdateOutput }
  | { type: 'xstate.done.actor.rollback'; output: RollbackOutput }
  | { type: 'xstate.done.actor.restore'; output: RestoreOutput }
  | { type: 'xstate.done.actor.updateCheck'; output: CheckOutput }
  | { type: 'xstate.error.actor.updateCheck'; error: Error }
  | { type: 'xstate.done.actor.players'; output: number | null }
  | {
      type:
        | 'xstate.error.actor.update'
        | 'xstate.error.actor.rollback'
        | 'xstate.error.actor.restore'
        | 'xstate.error.actor.process'
        | 'xstate.error.actor.players';
      error: Error;
    }
  | { type: `xstate.after.${string}` };

/** Whether the snapshot is in the state node with this id (`instance.lifecycle.server`). */
const within = (s: Snap, id: string): boolean => s._nodes.some((n) => n.id === id);

// A stable run never ends a loop by itself here: STABLE is a model event, sent when the path says so.
const timing = { ...TIMING, stableRunMs: 1e9 };
// The maintenance region's waits are far beyond any path's clock steps, so no lifecycle step fires one of them.
const rules: MaintenanceRules = { when: 'RoundEnd', maxDelayMs: 1e8, pollMs: 1e8 };
const HOLD_MS = 1e8;
const input: InstanceInput = { key: 'alpha', timing, revision: 'r1', maintenance: rules };

/** Plans a previous daemon may have left: each way a pending action is taken up, and a hold alone. */
const pendingSaved = (
  how: Partial<{ asked: boolean; carried: boolean; forced: boolean }>,
  when: 'RoundEnd' | 'Empty' = 'RoundEnd',
) => ({
  action: 'restart' as const,
  source: 'schedule' as const,
  when,
  since: 0,
  deadline: 1e8,
  maxDelayMs: 1e8,
  asked: false,
  carried: false,
  forced: false,
  ...how,
});
const SAVED: Array<{ saved: SavedMaintenance; adopted: boolean }> = [
  { saved: { pending: pendingSaved({ carried: true, forced: true }), hold: null }, adopted: true },
  { saved: { pending: pendingSaved({ carried: true }), hold: null }, adopted: true },
  { saved: { pending: pendingSaved({ asked: true }), hold: null }, adopted: true },
  { saved: { pending: pendingSaved({}, 'Empty'), hold: null }, adopted: true },
  { saved: { pending: pendingSaved({}), hold: null }, adopted: false },
  { saved: { pending: null, hold: { since: 0, until: HOLD_MS, reason: 'kept' } }, adopted: false },
];

// --- the machine's declared transitions, identified the same way in traversal and execution

const key = (t: AnyTransitionDefinition): string => {
  const source: AnyStateNode = t.source;
  const list = source.always?.includes(t) ? source.always : (source.transitions.get(t.eventType) ?? []);
  return `${source.id} ${t.eventType || 'always'} #${list.indexOf(t)}`;
};

function declared(node: AnyStateNode): { states: string[]; transitions: string[] } {
  const own = [...node.transitions.values()]
    .flat()
    .concat(node.always ?? [])
    .map(key);
  const children = Object.values(node.states).map(declared);
  return {
    states: [node.id, ...children.flatMap((c) => c.states)],
    transitions: [...own, ...children.flatMap((c) => c.transitions)],
  };
}

function eventTypes(): string[] {
  const types = new Set<string>();
  const walk = (n: DirectedGraphNode) => {
    for (const e of n.edges) types.add(e.label.text);
    n.children.forEach(walk);
  };
  walk(toDirectedGraph(instanceMachine));
  return [...types];
}

// --- events with payloads, offered where the executor can produce them

/** Events the maintenance region neither takes nor depends on. */
const UNRELATED = new Set([
  'ADOPT',
  'CONFIG',
  'PROCESS_BLOCKED',
  'ROLLBACK',
  'STABLE',
  'CHECKIN',
  'PROCESS_STARTED',
  'SHUTDOWN',
  'xstate.error.actor.process',
  'xstate.error.actor.update',
  'xstate.error.actor.updateCheck',
  'xstate.done.actor.rollback',
  'xstate.error.actor.rollback',
]);
/**
 * The invoked actors whose results are offered only in the state that runs them: the outputs they end with, and
 * the message they fail with (the process actor's failure is offered wherever a server is owned, below).
 */
const ACTOR_RESULTS: Record<string, { runs: string; outputs: unknown[]; error: string }> = {
  update: { runs: 'instance.lifecycle.updating', outputs: [{ revision: 'r2', changed: true }], error: 'CDN down' },
  rollback: { runs: 'instance.lifecycle.rolling-back', outputs: [{ revision: 'r0' }], error: 'no bin.prev' },
  restore: { runs: 'instance.lifecycle.restoring', outputs: [{ saved: 'saved-1' }], error: 'no space left' },
  updateCheck: {
    runs: 'instance.updateCheck.running',
    outputs: [
      { available: true, at: stampAt(0) },
      { available: false, at: stampAt(0) },
    ],
    error: 'no manifest',
  },
  players: { runs: 'instance.maintenance.action.pending.waiting.Empty.polling', outputs: [0, 3], error: 'no answer' },
};
const MAINTENANCE_TIMERS = ['.maintenanceDeadline.', '.holdEnds.', '.playerPoll.'];

function eventsFor(types: string[]) {
  return (s: Snap): ModelEvent[] => {
    // A done actor takes no events (the machine's transition function would still compute some).
    if (s.status === 'done') return [];
    const c = s.context;
    const launchId = c.launchId;
    const out: ModelEvent[] = [];
    // While maintenance is under way (an action pending, a hold), only what it reacts to is offered: the server's
    // exits and launches, requests, checks and installs. The lifecycle's own paths are explored with maintenance
    // idle; their product with every maintenance state would only slow the traversal.
    const maintaining = !within(s, 'instance.maintenance.action.idle') || !within(s, 'instance.maintenance.hold.free');
    for (const type of types) {
      if (maintaining && UNRELATED.has(type)) continue;
      const result = /^xstate\.(done|error)\.actor\.(\w+)$/.exec(type);
      const actor = ACTOR_RESULTS[result?.[2] ?? ''];
      if (result && actor) {
        if (!within(s, actor.runs)) continue;
        if (result[1] === 'done') for (const output of actor.outputs) out.push({ type, output } as ModelEvent);
        else out.push({ type, error: new Error(actor.error) } as ModelEvent);
        continue;
      }
      if (maintaining && type.startsWith('xstate.after.') && !MAINTENANCE_TIMERS.some((d) => type.includes(d)))
        continue;
      if (type.startsWith('xstate.after.')) {
        // A timer of any active state (the maintenance deadline belongs to the compound `waiting`).
        const active = s._nodes.map((n) => n.id);
        if (active.some((id) => type.endsWith(`.${id}`))) out.push({ type: type as `xstate.after.${string}` });
        continue;
      }
      const owned = within(s, 'instance.lifecycle.server');
      // Maintenance requests are offered where they matter (a running server, or none) with no check under way:
      // the regions are independent otherwise, and the product of all their states would only slow the traversal.
      const quiet =
        within(s, 'instance.updateCheck.idle') &&
        (within(s, 'instance.lifecycle.server.running') || within(s, 'instance.lifecycle.stopped.idle'));
      switch (type) {
        case 'START':
        case 'RESTART':
        case 'STOP':
        case 'STABLE':
          out.push({ type });
          break;
        case 'ROLLBACK':
          out.push({ type }, { type, withData: true });
          break;
        case 'RESTORE':
          out.push({ type, id: 'snap-1' });
          break;
        case 'UPDATE_CHECK':
          out.push({ type });
          if (quiet) out.push({ type, when: 'Now' });
          break;
        case 'MAINTAIN':
          if (!quiet) break;
          out.push(
            { type, source: 'schedule', at: stampAt(0) },
            { type, source: 'request', when: 'Now', at: stampAt(0) },
            { type, source: 'request', when: 'Empty', at: stampAt(0) },
          );
          break;
        case 'HOLD':
          if (quiet) out.push({ type, ms: HOLD_MS, reason: 'event', at: stampAt(0) });
          break;
        case 'RELEASE_HOLD':
          if (quiet) out.push({ type, at: stampAt(0) });
          break;
        case 'RESTORE_MAINTENANCE':
          // Only at daemon start, before anything else happened to maintenance.
          if (
            quiet &&
            within(s, 'instance.lifecycle.server.running') &&
            within(s, 'instance.maintenance.action.idle') &&
            within(s, 'instance.maintenance.hold.free')
          )
            for (const r of SAVED) out.push({ type, ...r, at: stampAt(0) });
          break;
        case 'ADOPT':
          out.push({ type, pid: 4242 });
          break;
        case 'CONFIG':
          out.push({ type, timing });
          break;
        case 'SHUTDOWN':
          out.push({ type, persist: true }, { type, persist: false });
          break;
        case 'CHECKIN':
          if (owned) out.push({ type, launchId });
          break;
        case 'PROCESS_STARTED':
          if (owned) out.push({ type, launchId, secret: `secret-${launchId}`, pid: 1000 + launchId });
          break;
        case 'PROCESS_EXITED':
          if (owned) out.push({ type, launchId, code: 0, signal: null }, { type, launchId, code: 1, signal: null });
          break;
        case 'PROCESS_BLOCKED':
          if (owned) out.push({ type, launchId, kind: 'resources', message: 'out of file descriptors (EMFILE)' });
          break;
        case 'xstate.error.actor.process':
          if (owned) out.push({ type, error: new Error('actor failed') });
          break;
        case 'UPDATE_FOUND':
        case 'SERVER_GONE':
        case 'LAUNCHED':
        case 'RESUMED':
          // Raised by the machine itself for its other regions: when a check finds a build (the done event above),
          // when a server exits, when one is launched, when a restart, rollback or restore ends an operator's stop.
          break;
        default:
          throw new Error(`model: no payload for event type ${type}; add it to eventsFor()`);
      }
    }
    return out;
  };
}

/**
 * Bounds the state space (serialising the whole context would let counters make it unbounded): per state,
 * only the context its guards can read.
 * Counters are capped where the machine stops telling them apart.
 */
function serialize(s: Snap): string {
  const c = s.context;
  const base: unknown[] = [
    s.value,
    Math.min(c.startupFailures, c.timing.startupFailureLimit),
    Math.min(c.crashStreak, 2),
    c.updatePending,
  ];
  const m = c.maintenance;
  base.push(m.pending === null ? null : [m.pending.action, m.pending.source, m.pending.when], m.updateWhen);
  if (s.status === 'done') return JSON.stringify(s.value);
  if (within(s, 'instance.lifecycle.server')) return JSON.stringify([...base, c.exitIntent, c.checkedIn]);
  if (['updating', 'rolling-back', 'restoring'].some((id) => within(s, `instance.lifecycle.${id}`)))
    return JSON.stringify([...base, c.exitIntent]);
  return JSON.stringify(base);
}

/** The machine as graph logic, recording which transitions each explored edge takes (from the microsteps). */
function recordingLogic() {
  const fired = new Map<string, { from: Snap; event: ModelEvent; to?: Snap }>();
  const logic = {
    config: instanceMachine.config,
    getInitialSnapshot: (scope: ActorScope<Snap, ModelEvent>, i: InstanceInput | undefined) =>
      instanceMachine.getInitialSnapshot(scope as never, i),
    transition: (from: Snap, event: ModelEvent, scope: ActorScope<Snap, ModelEvent>): Snap => {
      const firsts: { from: Snap; event: ModelEvent; to?: Snap }[] = [];
      const system = Object.create(scope.system, {
        _sendInspectionEvent: {
          value: (e: InspectionEvent) => {
            if (e.type !== '@xstate.microstep') return;
            for (const t of e._transitions) {
              if (fired.has(key(t))) continue;
              const first = { from, event };
              fired.set(key(t), first);
              firsts.push(first);
            }
          },
        },
      });
      const to = instanceMachine.transition(from, event as InstanceMachineEvent, { ...scope, system } as never);
      for (const first of firsts) first.to = to;
      return to;
    },
  };
  // ActorLogic's parameters are invariant in the snapshot/event types and the machine's typed `emitted` does
  // not fit them, so the logic is typed once here.
  return { logic: logic as unknown as ActorLogic<Snap, ModelEvent, InstanceInput>, fired };
}

// --- executing a step for real

function delayOf(type: string, h: Harness): number {
  const c = h.context();
  const t = c.timing;
  const delay = type.split('.')[2];
  switch (delay) {
    case 'checkinTimeout':
      return t.checkinTimeoutMs;
    case 'degradedAfter':
      return Math.floor(t.checkinTimeoutMs / 2);
    case 'hangAfter':
      return t.checkinTimeoutMs - Math.floor(t.checkinTimeoutMs / 2);
    case 'backoff':
      return backoffMs(t, c.crashStreak);
    case 'blockedBackoff':
      return backoffMs(t, (c.blocked?.attempts ?? 1) + 1);
    case 'maintenanceDeadline':
    case 'holdEnds':
    case 'playerPoll':
      // The maintenance region's own timers run beside the lifecycle's; they are fired by their events here (see
      // `execute`) and timed on the simulated clock in test/supervisor/maintenance.test.ts.
      return 0;
    default:
      throw new Error(`model: unknown delay in ${type}`);
  }
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function execute(h: Harness, e: ModelEvent): Promise<void> {
  switch (e.type) {
    case 'PROCESS_STARTED':
      return h.proc().started(e.pid ?? 1); // the fake reports its own launch id
    case 'PROCESS_EXITED':
      return h.proc().exit(e.code, e.signal);
    case 'PROCESS_BLOCKED':
      return h.proc().blocked(e.kind, e.message);
    case 'xstate.error.actor.process':
      return h.proc().fail();
    case 'xstate.done.actor.update':
      return h.finishUpdate(e.output);
    case 'xstate.error.actor.update':
      return h.failUpdate(e.error.message);
    case 'xstate.done.actor.updateCheck':
      return h.finishCheck(e.output.available);
    case 'xstate.error.actor.updateCheck':
      return h.failCheck(errorText(e.error));
    case 'xstate.done.actor.rollback':
      return h.finishRollback(e.output.revision);
    case 'xstate.error.actor.rollback':
      return h.failRollback(e.error.message);
    case 'xstate.done.actor.restore':
      return h.finishRestore(e.output.saved);
    case 'xstate.error.actor.restore':
      return h.failRestore(e.error.message);
    case 'xstate.done.actor.players':
      return h.answerPoll(e.output);
    case 'xstate.error.actor.players':
      return h.failPoll();
    case 'MAINTAIN':
    case 'HOLD':
    case 'RELEASE_HOLD':
    case 'RESTORE_MAINTENANCE':
      return h.actor.send({ ...e, at: stampAt(h.clock.now()) });
    case 'START':
    case 'RESTART':
    case 'STOP':
    case 'UPDATE_CHECK':
    case 'STABLE':
    case 'ADOPT':
    case 'CONFIG':
    case 'ROLLBACK':
    case 'RESTORE':
    case 'SHUTDOWN':
      return h.actor.send(e);
    // Launch ids in model events come from whichever snapshot the traversal kept for a state; use the real one.
    case 'CHECKIN':
      return h.checkin();
    default:
      if (e.type.startsWith('xstate.after.')) {
        const ms = delayOf(e.type, h);
        // A maintenance timer: its event, as its own timer would raise it (a clock step would fire others first).
        if (ms === 0) return h.actor.send(e as unknown as InstanceMachineEvent);
        return h.clock.increment(ms);
      }
      throw new Error(`model: no executor for ${e.type}`);
  }
}

/**
 * The traversal both tests read: the shortest path to every state, each event it fired recorded. Walked once, as
 * the machine's state space takes seconds to walk.
 */
const explore = (() => {
  let explored: { paths: StatePath<Snap, ModelEvent>[]; fired: ReturnType<typeof recordingLogic>['fired'] } | null =
    null;
  return () => {
    if (explored) return explored;
    const { logic, fired } = recordingLogic();
    const testModel = new TestModel(logic, { events: eventsFor(eventTypes()), serializeState: serialize, input });
    explored = { paths: testModel.getShortestPaths({ allowDuplicatePaths: true }), fired };
    return explored;
  };
})();

// ---

const model = suite('instance model');

model('instance model :: every state and every declared transition is taken by an executed path', async () => {
  const { paths, fired } = explore();
  const pathTo = new Map<string, StatePath<Snap, ModelEvent>>(paths.map((p) => [serialize(p.state), p]));

  const want = declared(instanceMachine.root);
  const atCreation = 'instance.operatorStop.remembered';
  // Taken once, as the actor is created, by its input (a remembered stop or none): instance.control.test.ts covers
  // both; the traversal starts after them.
  const unexplored = want.transitions.filter((t) => !fired.has(t) && !t.startsWith(`${atCreation} `));
  assert.equal(unexplored, [], 'the traversal reaches every declared transition');

  // One plan per transition: the shortest path to where it fired, plus the event that fired it; each step
  // carries the snapshot the traversal computed, which the executed machine must match.
  const plans = new Map<string, { event: ModelEvent; expect: Snap }[]>();
  for (const t of want.transitions) {
    const f = fired.get(t);
    const path = f && pathTo.get(serialize(f.from));
    if (!f?.to || !path) continue;
    const steps = path.steps
      .slice(1)
      .map((s) => ({ event: s.event, expect: s.state }))
      .concat({ event: f.event, expect: f.to });
    plans.set(steps.map((s) => JSON.stringify(s.event)).join(' '), steps);
  }

  const taken = new Set<string>();
  const reached = new Set<string>();
  // Only the instance machine makes microsteps; its children are callback and promise actors. A state is
  // reached when a transition enters it (transient ones like decide are never at rest).
  const inspect = (e: InspectionEvent) => {
    if (e.type !== '@xstate.microstep') return;
    for (const t of e._transitions) {
      taken.add(key(t));
      for (let n: AnyStateNode | undefined = t.target?.[0]; n; n = n.parent) reached.add(n.id);
      // A transition into a compound state enters its initial children too.
      for (let n = t.target?.[0]; n?.type === 'compound'; ) {
        n = n.initial.target[0];
        if (n) reached.add(n.id);
      }
    }
  };
  for (const steps of plans.values()) {
    const h = createHarness(timing, inspect, rules, { manualPolls: true });
    try {
      for (const [i, { event, expect }] of steps.entries()) {
        await execute(h, event);
        const where = steps
          .slice(0, i + 1)
          .map((s) => s.event.type)
          .join(' → ');
        // The traversal merges snapshots that serialize alike (launch ids, pids differ), so that is what must match.
        assert.is(
          serialize(h.actor.getSnapshot()),
          serialize(expect),
          `executed machine matches the model after ${where}`,
        );
      }
      assert.equal(h.errors, [], 'the machine never errors');
    } finally {
      h.stop();
    }
  }
  assert.equal(
    want.states.filter((s) => !reached.has(s) && s !== atCreation),
    [],
    'every state node is reached',
  );
  assert.equal(
    want.transitions.filter((t) => !taken.has(t) && !t.startsWith(`${atCreation} `)),
    [],
    'every declared transition is taken',
  );
  assert.ok(
    plans.size >= want.transitions.length / 3,
    `${plans.size} paths for ${want.transitions.length} transitions`,
  );
});

model('instance model :: in every state, a refused control request changes nothing and says why by its tags', () => {
  const reasons = new Set<string>(Object.values(BUSY_REASONS));
  const facts = { canUpdate: true, canRollback: true };
  let refused = 0;
  for (const { state } of explore().paths) {
    if (state.status !== 'active') continue;
    for (const action of CONTROL_ACTIONS) {
      const why = refusalOf(state, action, facts);
      if (why === null) continue;
      refused += 1;
      assert.ok(reasons.has(why), `${JSON.stringify(state.value)} refuses ${action} with a tag's reason: ${why}`);
      assert.ok(state.hasTag('busy'), `${JSON.stringify(state.value)} refuses ${action}, so it is tagged busy`);
      const [next] = transition(instanceMachine, state, CONTROL_EVENT[action]({}));
      assert.equal(next.value, state.value, `${action} refused in ${JSON.stringify(state.value)} keeps the state`);
      assert.equal(
        next.context,
        state.context,
        `${action} refused in ${JSON.stringify(state.value)} keeps the context`,
      );
    }
  }
  assert.ok(refused > 0, 'some state refuses something');
});

model.run();
