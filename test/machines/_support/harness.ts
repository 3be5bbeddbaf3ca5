/**
 * Drives the instance machine on a SimulatedClock with hand-operated fakes for its actors: the process (records
 * the commands it receives; the test reports its start and exit), the update, the update check and the rollback
 * (promises the test resolves or rejects), the player count (answered from a list, or by the test) and the
 * maintenance schedule (whose way back, `schedule.fire`, the test may use).
 */
import { suite, type Test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromCallback, fromPromise, type InspectionEvent, SimulatedClock, type StateValue } from 'xstate';
import { type ControlAction, refusalOf } from '../../../machines/instance.refusals.ts';
import type {
  CheckInput,
  PlayersInput,
  ProcessInput,
  RestoreInput,
  RollbackInput,
  ScheduleCommand,
  UpdateInput,
} from '../../../machines/instance.setup.ts';
import { instanceMachine } from '../../../machines/instance.ts';
import type {
  AlertKind,
  CheckOutput,
  InstanceEmitted,
  InstanceTiming,
  MaintenanceRules,
  ProcessCommand,
  RestoreOutput,
  RollbackOutput,
  Stamp,
  UpdateOutput,
} from '../../../machines/instance.types.ts';

export const TIMING: InstanceTiming = {
  checkinTimeoutMs: 10_000,
  backoffInitialMs: 1_000,
  backoffMaxMs: 8_000,
  stableRunMs: 60_000,
  startupFailureLimit: 3,
};

export interface FakeProcess {
  input: ProcessInput;
  commands: ProcessCommand[];
  /** The machine stopped the child (its cleanup ran). */
  stopped: boolean;
  /** Reports the launch's secret (`secret-<launchId>`) and its pid. */
  started(pid: number): void;
  exit(code: number | null, signal?: string | null, lastLine?: string): void;
  /** The spawn failed (no server ran), with the launch error's message. */
  spawnFailed(failure?: string): void;
  /** The launch was blocked (runProcess got a LaunchBlockedError from the host): no process ran. */
  blocked(kind: 'resources' | 'port', message?: string): void;
  /** Makes the actor itself fail (its receive handler throws), as a broken runProcess would. */
  fail(): void;
}

export interface Pending<TIn, TOut> {
  input: TIn;
  signal: AbortSignal;
  resolve(value: TOut): void;
  reject(err: Error): void;
}

function pending<TIn, TOut>(list: Pending<TIn, TOut>[]) {
  return ({ input, signal }: { input: TIn; signal: AbortSignal }) =>
    new Promise<TOut>((resolve, reject) => list.push({ input, signal, resolve, reject }));
}

const dotted = (v: StateValue): string => {
  if (typeof v === 'string') return v;
  const [key, inner] = Object.entries(v)[0] ?? ['', undefined];
  return inner === undefined ? key : `${key}.${dotted(inner)}`;
};

/** The path in the lifecycle region, as the status shows it: `stopped.idle`, `server.running`. */
export function pathOf(value: StateValue): string {
  return dotted(typeof value === 'string' ? value : (value.lifecycle as StateValue));
}

/** The update-check region's path: `idle`, `queued`, `running.once`, `running.again`, `off`. */
export function checkPathOf(value: StateValue): string {
  return typeof value === 'string' ? value : dotted(value.updateCheck as StateValue);
}

/** Lets promise callbacks (a resolved fake update or check) reach the machine. */
export const settle = () => new Promise<void>((r) => setImmediate(r));

/** A stamp of `t` on both clocks: the simulated clock is the wall and the monotonic one at once, until a test steps. */
export const stampAt = (t: number): Stamp => ({ wall: t, mono: t });

/** Answers the oldest unanswered call in `list` (there must be one: a `what` running) and lets the machine see it. */
async function answerOldest<TIn, TOut>(
  list: Pending<TIn, TOut>[],
  what: string,
  answer: (call: Pending<TIn, TOut>) => void,
): Promise<void> {
  const call = list.shift();
  if (!call) throw new Error(`no ${what} is running`);
  answer(call);
  await settle();
}

export const RULES: MaintenanceRules = { when: 'RoundEnd', maxDelayMs: 120 * 60_000, pollMs: 1_000 };

/** Actors a test provides instead of the harness's fakes (the real schedule actor on the simulated clock, say). */
type ActorOverrides = Parameters<typeof instanceMachine.provide>[0]['actors'];

export function createHarness(
  timing: Partial<InstanceTiming> = {},
  inspect?: (e: InspectionEvent) => void,
  rules: Partial<MaintenanceRules> = {},
  options: {
    now?: number;
    actors?: (clock: SimulatedClock) => ActorOverrides;
    /** Player polls wait for `answerPoll` instead of answering at once from `players`. */
    manualPolls?: boolean;
    /** A stop data.json remembers, as the supervisor gives it at daemon start. */
    stop?: { by: string; at: string };
  } = {},
) {
  const clock = new SimulatedClock();
  if (options.now !== undefined) clock.set(options.now);
  const processes: FakeProcess[] = [];
  const updates: Pending<UpdateInput, UpdateOutput>[] = [];
  const checks: Pending<CheckInput, CheckOutput>[] = [];
  const rollbacks: Pending<RollbackInput, RollbackOutput>[] = [];
  const restores: Pending<RestoreInput, RestoreOutput>[] = [];
  const emitted: InstanceEmitted[] = [];
  const errors: unknown[] = [];
  /** Answers for the player polls of `When: Empty`, in order; a poll with none left gets no count (null). */
  const players: number[] = [];
  /** When each poll was made (the clock's time). */
  const pollTimes: number[] = [];
  const polls: Pending<PlayersInput, number | null>[] = [];
  /** The schedule actor's way back to the machine (a RestartSchedule or UpdateSchedule fire), and its commands. */
  const schedule: {
    fire: ((e: { type: 'UPDATE_CHECK' } | { type: 'MAINTAIN'; source: 'schedule'; at: Stamp }) => void) | null;
    commands: ScheduleCommand[];
  } = {
    fire: null,
    commands: [],
  };

  const runProcess = fromCallback<ProcessCommand, ProcessInput>(({ input, sendBack, receive, self }) => {
    let failNext = false;
    const p: FakeProcess = {
      input,
      commands: [],
      stopped: false,
      started: (pid) =>
        sendBack({ type: 'PROCESS_STARTED', launchId: input.launchId, secret: `secret-${input.launchId}`, pid }),
      exit: (code, signal = null, lastLine?: string) =>
        sendBack({
          type: 'PROCESS_EXITED',
          launchId: input.launchId,
          code,
          signal,
          ...(lastLine === undefined ? {} : { lastLine }),
        }),
      // As runProcess reports it: an exit with neither code nor signal.
      spawnFailed: (failure = 'cannot launch /srv/bin/server: ENOENT (file not found) — check RunCommand') =>
        sendBack({ type: 'PROCESS_EXITED', launchId: input.launchId, code: null, signal: null, failure }),
      blocked: (kind, message = `blocked (${kind})`) =>
        sendBack({ type: 'PROCESS_BLOCKED', launchId: input.launchId, kind, message }),
      fail: () => {
        failNext = true;
        self.send({ type: 'NOTIFY_UPDATE' });
      },
    };
    receive((cmd) => {
      if (failNext) throw new Error('fake process actor failed');
      p.commands.push(cmd);
    });
    processes.push(p);
    return () => {
      p.stopped = true;
    };
  });

  const machine = instanceMachine.provide({
    actors: {
      runProcess,
      update: fromPromise<UpdateOutput, UpdateInput>(pending(updates)),
      checkUpdate: fromPromise<CheckOutput, CheckInput>(pending(checks)),
      rollback: fromPromise<RollbackOutput, RollbackInput>(pending(rollbacks)),
      restore: fromPromise<RestoreOutput, RestoreInput>(pending(restores)),
      readPlayers: fromPromise<number | null, PlayersInput>(({ input, signal }) => {
        pollTimes.push(clock.now());
        if (options.manualPolls) return pending(polls)({ input, signal });
        return Promise.resolve(players.shift() ?? null);
      }),
      maintenanceSchedule: fromCallback<ScheduleCommand, PlayersInput>(({ sendBack, receive }) => {
        schedule.fire = sendBack;
        receive((cmd) => schedule.commands.push(cmd));
        return () => {
          schedule.fire = null;
        };
      }),
      ...options.actors?.(clock),
    },
  });
  const actor = createActor(machine, {
    clock,
    inspect,
    input: {
      key: 'alpha',
      timing: { ...TIMING, ...timing },
      revision: 'r1',
      maintenance: { ...RULES, ...rules },
      stop: options.stop ?? null,
    },
  });
  actor.on('*', (e) => emitted.push(e));
  actor.subscribe({ error: (err) => errors.push(err) });
  actor.start();

  const h = {
    actor,
    clock,
    processes,
    updates,
    checks,
    rollbacks,
    restores,
    emitted,
    errors,
    players,
    pollTimes,
    schedule,
    state: () => pathOf(actor.getSnapshot().value),
    check: () => checkPathOf(actor.getSnapshot().value),
    context: () => actor.getSnapshot().context,
    /** The newest process child. */
    proc: (): FakeProcess => {
      const p = processes.at(-1);
      if (!p) throw new Error('no process was spawned');
      return p;
    },
    /** Why the machine refuses `action` now (an update provider and a previous build are there), or null. */
    refusal: (action: ControlAction) => refusalOf(actor.getSnapshot(), action, { canUpdate: true, canRollback: true }),
    alerts: () => emitted.flatMap((e) => (e.type === 'alert' ? [e.kind] : [])),
    /** The first alert of `kind`, without its `type` and `kind` (undefined when none was told). */
    alert: (kind: AlertKind) => {
      const found = emitted.find((e) => e.type === 'alert' && e.kind === kind);
      if (found?.type !== 'alert') return undefined;
      const { type: _type, kind: _kind, ...rest } = found;
      return rest;
    },
    restarts: () => emitted.flatMap((e) => (e.type === 'restart' ? [e.reason] : [])),
    checkin: () => actor.send({ type: 'CHECKIN', launchId: actor.getSnapshot().context.launchId }),
    /** Each answers the oldest unanswered update, check or rollback and lets the machine see it. */
    finishUpdate: (output: UpdateOutput = { revision: 'r1', changed: false }) =>
      answerOldest(updates, 'update', (u) => u.resolve(output)),
    failUpdate: (message = 'CDN down') => answerOldest(updates, 'update', (u) => u.reject(new Error(message))),
    finishCheck: (available: boolean) =>
      answerOldest(checks, 'update check', (c) => c.resolve({ available, at: stampAt(clock.now()) })),
    answerPoll: (players: number | null) => answerOldest(polls, 'player poll', (p) => p.resolve(players)),
    failPoll: () => answerOldest(polls, 'player poll', (p) => p.reject(new Error('no answer'))),
    failCheck: (message = 'manifest unreachable') =>
      answerOldest(checks, 'update check', (c) => c.reject(new Error(message))),
    finishRollback: (revision: string | null = 'r0') =>
      answerOldest(rollbacks, 'rollback', (r) => r.resolve({ revision })),
    failRollback: (message = 'no bin.prev') => answerOldest(rollbacks, 'rollback', (r) => r.reject(new Error(message))),
    finishRestore: (saved = 'saved-1') => answerOldest(restores, 'restore', (r) => r.resolve({ saved })),
    failRestore: (message = 'no space left') => answerOldest(restores, 'restore', (r) => r.reject(new Error(message))),
    /** START, let the initial update finish, and report the process started: ends in `starting`. */
    async launch(pid = 100) {
      actor.send({ type: 'START' });
      await h.finishUpdate();
      h.proc().started(pid);
    },
    /** launch() plus the first check-in: ends in `running`. */
    async run(pid = 100) {
      await h.launch(pid);
      h.checkin();
    },
    /** launch() and three exits before a check-in: ends in `stopped.failing`. */
    async failing(pid = 100) {
      await h.launch(pid);
      for (let i = 0; i < 3; i++) h.proc().exit(1);
    },
    /** UPDATE_CHECK, answered at once. */
    async checkUpdate(available: boolean) {
      actor.send({ type: 'UPDATE_CHECK' });
      await h.finishCheck(available);
    },
    /** run() and one crash, relaunched at once and checked in again: back in `running`. */
    async crashedOnce(pid = 100) {
      await h.run(pid);
      h.proc().exit(1);
      h.checkin();
    },
    stop: () => actor.stop(),
  };
  return h;
}

/** Two crashes after check-ins: ends in restarting.backoff. */
export async function crashLoop(h: Harness): Promise<void> {
  await h.crashedOnce();
  h.proc().exit(1);
  assert.is(h.state(), 'restarting.backoff');
}

export type Harness = ReturnType<typeof createHarness>;

/** A uvu suite whose every test gets a fresh harness as `h`; after each, the actor stops and must never have errored. */
export function harnessSuite(name: string): Test<{ h: Harness }> {
  const s = suite<{ h: Harness }>(name, { h: undefined as never });
  s.before.each((ctx) => {
    ctx.h = createHarness();
  });
  s.after.each((ctx) => {
    ctx.h.stop();
    assert.equal(ctx.h.errors, [], 'the machine never errors');
  });
  return s;
}
