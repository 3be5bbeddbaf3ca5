/** Fakes for the runProcess actor's tests: a server process the test ends, and a parent that invokes the actor. */
import { createActor, sendTo, setup } from 'xstate';
import type { ProcessCommand, ProcessEvent } from '../../../machines/instance.types.ts';
import type { ExitStatus, ServerProcess } from '../../../src/process/spawn.ts';
import { createRunProcess, type ProcessHost } from '../../../src/supervisor/run-process.ts';

/** A server that exits when the test says so, or when SIGKILLed; it records every signal. */
export function fakeServer(pid: number) {
  let exit: (status: ExitStatus) => void = () => undefined;
  const signals: string[] = [];
  let detached = false;
  const proc: ServerProcess = {
    pid,
    startTime: '1@boot',
    exited: new Promise((resolve) => {
      exit = resolve;
    }),
    kill(signal = 'SIGKILL') {
      signals.push(signal);
      if (signal === 'SIGKILL') exit({ code: null, signal });
    },
    detach() {
      detached = true;
    },
  };
  return { proc, signals, exit: (status: ExitStatus) => exit(status), detached: () => detached };
}

/** A parent that invokes the actor as the instance machine does (launch 7), keeping what it sends back and whether it failed. */
export function runActor(host: ProcessHost, adoptPid: number | null = null) {
  const seen: ProcessEvent[] = [];
  const failures: unknown[] = [];
  const parent = setup({
    types: { events: {} as ProcessEvent | { type: 'CMD'; cmd: ProcessCommand } },
    actors: { runProcess: createRunProcess(host) },
  }).createMachine({
    invoke: {
      id: 'process',
      src: 'runProcess',
      input: { key: 'alpha', launchId: 7, adoptPid },
      onError: { actions: ({ event }) => void failures.push(event.error) },
    },
    on: {
      CMD: { actions: sendTo('process', ({ event }) => (event as { cmd: ProcessCommand }).cmd) },
      PROCESS_STARTED: { actions: ({ event }) => void seen.push(event) },
      PROCESS_EXITED: { actions: ({ event }) => void seen.push(event) },
      PROCESS_BLOCKED: { actions: ({ event }) => void seen.push(event) },
    },
  });
  const actor = createActor(parent).start();
  return { seen, failures, actor, send: (cmd: ProcessCommand) => actor.send({ type: 'CMD', cmd }) };
}
