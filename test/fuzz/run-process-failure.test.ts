/**
 * A counterexample of the statechart fuzz suite (machine.test.ts), kept as plain tests of the runProcess actor:
 * `ADOPT`, then the process actor fails on a command. XState never runs the cleanup of a failed callback actor, so
 * the server it held was never killed, while the machine took the failure for an exit and launched (here: updated,
 * then launched) another: two servers for one instance. Now a command that throws never fails the actor: one meant
 * to end the server ends it with a kill, and its exit is reported as any exit.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, sendTo, setup } from 'xstate';
import type { ProcessCommand, ProcessEvent } from '../../machines/instance.types.ts';
import type { ExitStatus, ServerProcess } from '../../src/process/spawn.ts';
import { createRunProcess, type ProcessHost } from '../../src/supervisor/run-process.ts';
import { waitFor } from '../_support/env.ts';
import { recordingLogger } from '../http/support.ts';

/** An adopted server (pid 8181) that exits on SIGKILL, and a host whose shutdown windows cannot be read. */
function brokenHost() {
  let exit: (status: ExitStatus) => void = () => undefined;
  const signals: string[] = [];
  const proc: ServerProcess = {
    pid: 8181,
    startTime: '1@boot',
    exited: new Promise((resolve) => {
      exit = resolve;
    }),
    kill(signal = 'SIGKILL') {
      signals.push(signal);
      if (signal === 'SIGKILL') exit({ code: null, signal });
    },
    detach: () => undefined,
  };
  const log = recordingLogger('alpha');
  const host: ProcessHost = {
    key: 'alpha',
    log,
    apiPort: () => 1,
    shutdownWindows: () => {
      throw new Error('Timing is gone');
    },
    secret: () => 'fresh-secret',
    launch: () => Promise.reject(new Error('not launched in this test')),
    adopt: (pid) => (pid === 8181 ? { proc, secret: 'old-secret' } : null),
    dump: async () => undefined,
    released: () => undefined,
  };
  return { host, log, signals };
}

/** Invokes the actor as the instance machine does, keeping what it sends back and whether it failed. */
function run(host: ProcessHost) {
  const seen: ProcessEvent[] = [];
  const failures: unknown[] = [];
  const parent = setup({
    types: { events: {} as ProcessEvent | { type: 'CMD'; cmd: ProcessCommand } },
    actors: { runProcess: createRunProcess(host) },
  }).createMachine({
    invoke: {
      id: 'process',
      src: 'runProcess',
      input: { key: 'alpha', launchId: 1, adoptPid: 8181 },
      onError: { actions: ({ event }) => void failures.push(event.error) },
    },
    on: {
      CMD: { actions: sendTo('process', ({ event }) => (event as { cmd: ProcessCommand }).cmd) },
      PROCESS_STARTED: { actions: ({ event }) => void seen.push(event) },
      PROCESS_EXITED: { actions: ({ event }) => void seen.push(event) },
    },
  });
  const actor = createActor(parent).start();
  return { seen, failures, actor, send: (cmd: ProcessCommand) => actor.send({ type: 'CMD', cmd }) };
}

const failing = suite('fuzz/runProcess command failures');

failing('runProcess :: a stop command that throws kills the server and reports its exit; the actor lives', async () => {
  const h = brokenHost();
  const r = run(h.host);
  r.send({ type: 'SHUTDOWN', reason: 'Restart requested by the watchdog' });
  await waitFor('the exit', () => r.seen.find((e) => e.type === 'PROCESS_EXITED'), 2000);
  assert.equal(r.failures, [], 'the actor did not fail');
  assert.equal(h.signals, ['SIGKILL']);
  assert.equal(r.seen.at(-1), { type: 'PROCESS_EXITED', launchId: 1, code: null, signal: 'SIGKILL' });
  assert.ok(
    h.log.lines.some((l) => /the SHUTDOWN command failed.*Timing is gone/.test(l)),
    h.log.lines.join('\n'),
  );
  r.actor.stop();
});

failing('runProcess :: an update notice that throws is only logged; the server keeps running', async () => {
  const h = brokenHost();
  const r = run(h.host);
  r.send({ type: 'NOTIFY_UPDATE' });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(r.failures, []);
  assert.equal(h.signals, []);
  assert.ok(h.log.lines.some((l) => /the NOTIFY_UPDATE command failed/.test(l)));
  r.actor.stop();
  assert.equal(h.signals, ['SIGKILL'], 'the cleanup still runs when the machine lets the server go');
});

failing.run();
