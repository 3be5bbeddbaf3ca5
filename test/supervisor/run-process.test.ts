/**
 * The runProcess actor against a fake ProcessHost and fake server processes: what it reports to the machine and in
 * which order, and what it does to the server for each command. No process is spawned; the real host (spawn,
 * adopt, dump) is exercised by the e2e suites.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ProcessEvent } from '../../machines/instance.types.ts';
import { LaunchBlockedError } from '../../src/errors.ts';
import { requestUpdate } from '../../src/process/server-api.ts';
import type { OwnedServer, ProcessHost } from '../../src/supervisor/run-process.ts';
import { waitFor } from '../_support/env.ts';
import { recorder } from '../_support/fixture-servers.ts';
import { recordingLogger } from '../http/_support/app.ts';
import { fakeServer, runActor } from './_support/run-process.ts';

/**
 * A host whose launch reaches its spawn and answers when the test says so (an answer with a server spawns first); it
 * records releases, dumps and the order of things.
 */
function fakeHost(opts: { adoptable?: OwnedServer; apiPort?: number } = {}) {
  const log = recordingLogger('alpha');
  const happened: string[] = [];
  let answer: (outcome: OwnedServer | Error) => void = () => undefined;
  let spawn: () => void = () => undefined;
  const host: ProcessHost = {
    key: 'alpha',
    log,
    apiPort: () => opts.apiPort ?? 1,
    shutdownWindows: () => ({ requestMs: 100, exitMs: 100, maxAnswerBytes: 256_000 }),
    secret: () => 'fresh-secret',
    launch: (_launchId, secret, spawning) =>
      new Promise((resolve, reject) => {
        happened.push(`launch ${secret}`);
        let spawned = false;
        spawn = () => {
          if (!spawned) spawning();
          spawned = true;
        };
        answer = (outcome) => {
          if (outcome instanceof Error) return reject(outcome);
          spawn();
          resolve(outcome);
        };
      }),
    adopt: (pid) => (opts.adoptable?.proc.pid === pid ? opts.adoptable : null),
    dump: async (proc) => {
      happened.push(`dump ${proc.pid}`);
    },
    released: (how) => void happened.push(`released ${how}`),
  };
  return { host, log, happened, spawn: () => spawn(), answer: (outcome: OwnedServer | Error) => answer(outcome) };
}

const exited = (seen: ProcessEvent[]) => seen.find((e) => e.type === 'PROCESS_EXITED');

/** An actor whose launch of a fake server (`pid`) has answered and been reported with its pid. */
async function launched(pid: number) {
  const h = fakeHost();
  const r = runActor(h.host);
  const server = fakeServer(pid);
  h.answer({ proc: server.proc, secret: 'fresh-secret' });
  await waitFor('the pid', () => r.seen.length === 2, 10_000);
  return { h, r, server };
}

const test = suite('supervisor runProcess');

test('run-process :: the launch secret is reported just before the spawn, then the pid; the exit clears the launch record', async () => {
  const h = fakeHost();
  const r = runActor(h.host);
  // The preparation (stragglers, cgroup, launch record) is not the server's time: nothing is reported during it.
  assert.equal(r.seen, []);
  h.spawn();
  assert.equal(r.seen, [{ type: 'PROCESS_STARTED', launchId: 7, secret: 'fresh-secret', pid: null }]);
  const server = fakeServer(4242);
  h.answer({ proc: server.proc, secret: 'fresh-secret' });
  await waitFor('the pid', () => r.seen.length === 2, 10_000);
  assert.equal(r.seen[1], { type: 'PROCESS_STARTED', launchId: 7, secret: 'fresh-secret', pid: 4242 });
  server.exit({ code: 3, signal: null });
  const e = await waitFor('the exit', () => exited(r.seen), 10_000);
  assert.equal(e, { type: 'PROCESS_EXITED', launchId: 7, code: 3, signal: null });
  assert.equal(h.happened, ['launch fresh-secret', 'released exited']);
  r.actor.stop();
  assert.equal(server.signals, ['SIGKILL'], 'stopping the actor still signals the group, for stragglers');
});

/** The launch answers `failure`: what the actor reports (a PROCESS_BLOCKED, never an exit), and the host. */
async function blockedBy(failure: Error) {
  const h = fakeHost();
  const r = runActor(h.host);
  h.answer(failure);
  const e = await waitFor('the block', () => r.seen.find((x) => x.type === 'PROCESS_BLOCKED'), 10_000);
  assert.is(exited(r.seen), undefined);
  return { h, r, e };
}

test('run-process :: a launch blocked by a held port is PROCESS_BLOCKED with its words, never an exit', async () => {
  const words = 'port 1212 held by pid 77 (helper), left from the previous launch';
  const { r, e } = await blockedBy(new LaunchBlockedError('port', words));
  assert.equal(e, { type: 'PROCESS_BLOCKED', launchId: 7, kind: 'port', message: words });
  r.actor.stop();
});

test('run-process :: a launch that ran out of descriptors anywhere on the way is blocked by resources', async () => {
  // As fs.openSync throws it: a plain Error with an errno code, not yet a LaunchBlockedError.
  const { h, r, e } = await blockedBy(
    Object.assign(new Error("EMFILE: too many open files, open 'server.log'"), { code: 'EMFILE' }),
  );
  assert.equal(e, {
    type: 'PROCESS_BLOCKED',
    launchId: 7,
    kind: 'resources',
    message: 'the watchdog is out of file descriptors (EMFILE)',
  });
  // At debug only: the instance says it once per attempt with the retry delay (no warning twice per attempt).
  assert.ok(
    h.log.lines.some((l) => l.startsWith('debug') && l.includes('launch blocked')),
    h.log.lines.join('\n'),
  );
  assert.not.ok(
    h.log.lines.some((l) => l.startsWith('warn')),
    h.log.lines.join('\n'),
  );
  r.actor.stop();
});

test('run-process :: a failed spawn is an exit with neither code nor signal, carrying the error, and is logged', async () => {
  const h = fakeHost();
  const r = runActor(h.host);
  h.answer(new Error('ENOENT: no such program', { cause: new Error('spawn detail') }));
  const e = await waitFor('the exit', () => exited(r.seen), 10_000);
  assert.equal(e, {
    type: 'PROCESS_EXITED',
    launchId: 7,
    code: null,
    signal: null,
    failure: 'ENOENT: no such program',
  });
  assert.ok(
    h.log.lines.some((l) => /launch failed.*ENOENT/.test(l)),
    h.log.lines.join('\n'),
  );
  r.actor.stop();
});

test('run-process :: commands sent before the spawn answers wait for it; a first hang is dumped, then killed; later stop requests are moot', async () => {
  const api = await recorder(() => ({ status: 200 }));
  const h = fakeHost({ apiPort: api.port });
  const r = runActor(h.host);
  r.send({ type: 'KILL', reason: 'hang', dump: true });
  r.send({ type: 'LEAVE' });
  r.send({ type: 'NOTIFY_UPDATE' });
  const server = fakeServer(5151);
  h.answer({ proc: server.proc, secret: 'fresh-secret' });
  await waitFor('the exit', () => exited(r.seen), 10_000);
  assert.equal(h.happened, ['launch fresh-secret', 'dump 5151', 'released exited']);
  // A later request the same way: anything LEAVE or NOTIFY_UPDATE had sent the server's API would have got there
  // first (they run when the launch answers, before the exit).
  assert.is(await requestUpdate(api.port, 'marker', { timeoutMs: 10_000, maxBytes: 256_000 }), true);
  await api.close();
  assert.equal(
    api.requests.map((q) => `${q.url} ${q.headers.watchdogtoken}`),
    ['/update marker'],
    'no POST /update or /shutdown was tried',
  );
  assert.equal(h.log.lines, []);
  assert.equal(server.signals, ['SIGKILL'], 'one kill; LEAVE and NOTIFY_UPDATE sent nothing to a server going anyway');
  r.actor.stop();
});

test('run-process :: a hang again in the same loop is killed without a dump', async () => {
  const { h, r } = await launched(6161);
  r.send({ type: 'KILL', reason: 'hang', dump: false });
  await waitFor('the exit', () => exited(r.seen), 10_000);
  assert.not.ok(h.happened.some((x) => x.startsWith('dump')));
  assert.ok(h.log.lines.some((l) => /killed without a dump/.test(l)));
  r.actor.stop();
});

test('run-process :: detach: the launch record stays, a later exit is not reported, and stopping the actor kills nothing', async () => {
  const { h, r, server } = await launched(7171);
  r.send({ type: 'DETACH' });
  assert.ok(server.detached());
  r.actor.stop();
  server.exit({ code: 0, signal: null });
  // The actor's handler of this promise was attached first: it has run once this await resumes, and a turn later.
  await server.proc.exited;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(server.signals, []);
  assert.equal(h.happened, ['launch fresh-secret', 'released detached']);
  assert.is(exited(r.seen), undefined);
});

test('run-process :: adoption: the recorded server is watched with its own secret; an unknown pid is an exit at once', async () => {
  const left = fakeServer(8181);
  const h = fakeHost({ adoptable: { proc: left.proc, secret: 'old-secret' } });
  const adopted = runActor(h.host, 8181);
  assert.equal(adopted.seen, [{ type: 'PROCESS_STARTED', launchId: 7, secret: 'old-secret', pid: 8181 }]);
  assert.equal(h.happened, [], 'nothing was launched');
  adopted.actor.stop();
  assert.equal(left.signals, ['SIGKILL'], 'an adopted server is owned like a launched one');

  const unknown = runActor(fakeHost().host, 9999);
  assert.equal(unknown.seen, [{ type: 'PROCESS_EXITED', launchId: 7, code: null, signal: null }]);
  unknown.actor.stop();
});

test.run();
