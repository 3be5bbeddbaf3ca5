/**
 * A counterexample of the statechart fuzz suite (machine.test.ts), kept as plain tests of the runProcess actor:
 * `ADOPT`, then the process actor fails on a command. XState never runs the cleanup of a failed callback actor, so
 * the server it held was never killed, while the machine took the failure for an exit and launched (here: updated,
 * then launched) another: two servers for one instance. Now a command that throws never fails the actor: one meant
 * to end the server ends it with a kill, and its exit is reported as any exit.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ProcessHost } from '../../src/supervisor/run-process.ts';
import { waitFor } from '../_support/env.ts';
import { recordingLogger } from '../http/_support/app.ts';
import { fakeServer, runActor } from '../supervisor/_support/run-process.ts';

/** An adopted server (pid 8181) that exits on SIGKILL, and a host whose shutdown windows cannot be read. */
function brokenHost() {
  const { proc, signals } = fakeServer(8181);
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

const failing = suite('fuzz/runProcess command failures');

failing('runProcess :: a stop command that throws kills the server and reports its exit; the actor lives', async () => {
  const h = brokenHost();
  const r = runActor(h.host, 8181);
  r.send({ type: 'STOP_GRACEFULLY', reason: 'Restart requested by the watchdog' });
  await waitFor('the exit', () => r.seen.find((e) => e.type === 'PROCESS_EXITED'), 10_000);
  assert.equal(r.failures, [], 'the actor did not fail');
  assert.equal(h.signals, ['SIGKILL']);
  assert.equal(r.seen.at(-1), { type: 'PROCESS_EXITED', launchId: 7, code: null, signal: 'SIGKILL' });
  assert.ok(
    h.log.lines.some((l) => /the STOP_GRACEFULLY command failed.*Timing is gone/.test(l)),
    h.log.lines.join('\n'),
  );
  r.actor.stop();
});

failing('runProcess :: an update notice that throws is only logged; the server keeps running', async () => {
  const h = brokenHost();
  const r = runActor(h.host, 8181);
  r.send({ type: 'NOTIFY_UPDATE' });
  // The command has been handled once its failure is logged (a kill or the actor's failure would come with it).
  await waitFor(
    'the failure logged',
    () => h.log.lines.some((l) => /the NOTIFY_UPDATE command failed/.test(l)),
    10_000,
  );
  assert.equal(r.failures, []);
  assert.equal(h.signals, []);
  r.actor.stop();
  assert.equal(h.signals, ['SIGKILL'], 'the cleanup still runs when the machine lets the server go');
});

failing.run();
