import { readFileSync } from 'node:fs';
import * as assert from 'uvu/assert';
import { testConfig } from '../_support/config.ts';
import { basic, daemonSuite, type RunningDaemon, waitState } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { alive } from './_support/updates.ts';
import { launchSecret } from './resilience/_support/daemon-crash.ts';

/**
 * The demo instance's TimeoutSeconds: the hang deadline after its last check-in, and the first check-in's deadline
 * after a launch. The demo runs through tsx here, which on a loaded machine takes several seconds to check in (at
 * 3 s every launch was killed as hung and the instance gave up): 8 s lets it, at 5 s more for the hang test.
 */
const TIMEOUT_SECONDS = 8;
const test = daemonSuite('e2e :: lifecycle with the demo server', {
  webhook: true,
  // The checkout's own path, as `npm start` runs it: the daemon and the demo server through tsx (npm test runs
  // the other suites' processes compiled: test/_support/runtime.ts).
  env: { WATCHDOG_RUNTIME: 'src' },
  // UpdateType Dummy: the first launch "installs" revision 1 (src/updates/providers/dummy.ts); nothing here asks for
  // another update, so relaunches after a restart, a crash or a hang keep it.
  config: async ({ hook }) =>
    testConfig({
      webhook: hook!.url,
      instances: [{ port: await freePort(), timeoutSeconds: TIMEOUT_SECONDS, extra: '      UpdateType: Dummy' }],
    }),
});

const token = 'tok';
/** Running (a relaunch when `notPid` is given); the deadline only catches a hang: tsx launches are slow under load. */
const running = (d: RunningDaemon, notPid?: number | null) =>
  waitState(d, 'demo', token, 'server.running', { notPid, timeoutMs: 45_000 });

/** The secret a server got, read from its environment (root can read /proc/<pid>/environ). */
async function secretOf(pid: number): Promise<string> {
  const secret = await launchSecret(pid);
  if (secret === undefined) throw new Error('no token in the server environment');
  return secret;
}

const ping = (d: RunningDaemon, secret: string) =>
  fetch(`${d.url}/server_api/demo/ping`, { method: 'POST', headers: { authorization: basic('demo', secret) } }).then(
    (r) => r.status,
  );

/** The state letter of /proc/<pid>/stat (R, S, T, Z, …), or null once the pid is gone (ESRCH). */
function procState(pid: number): string | null {
  try {
    process.kill(pid, 0);
  } catch {
    return null;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

/** Gone: no such pid, or a zombie (dead, only not reaped yet). */
const gone = (pid: number) => {
  const st = procState(pid);
  return st === null || st === 'Z';
};

test('lifecycle :: reaches running; status reports state, pid, revision and last check-in', async ({ daemon }) => {
  const d = daemon!;
  const s = await running(d);
  assert.type(s.pid, 'number');
  assert.is(s.revision, '1', 'the revision the Dummy provider installed at the first launch');
  assert.ok(s.lastCheckinAt && !Number.isNaN(Date.parse(s.lastCheckinAt)), 'lastCheckinAt is a timestamp');
  assert.is(s.startupFailures, 0);
});

test('lifecycle :: restart: the server gets /shutdown, comes back with a new pid and secret; the old secret is refused', async ({
  daemon,
}) => {
  const d = daemon!;
  const before = await running(d);
  const oldSecret = await secretOf(before.pid!);
  assert.is(await ping(d, oldSecret), 200);
  assert.is(await d.control('demo', token, 'restart'), 200);
  const after = await running(d, before.pid);
  assert.not.ok(alive(before.pid!), 'old server gone');
  assert.match(d.log(), /Restart requested/);
  const newSecret = await secretOf(after.pid!);
  assert.is.not(newSecret, oldSecret);
  assert.is(await ping(d, oldSecret), 401);
  assert.is(await ping(d, newSecret), 200);
});

test('lifecycle :: stop: the server gets /update, exits, is not relaunched, the webhook says so; restart brings it back', async ({
  daemon,
  hook,
}) => {
  const d = daemon!;
  const before = await running(d);
  const sent = hook!.messages.length;
  const from = d.log().length;
  assert.is(await d.control('demo', token, 'stop'), 200);
  await waitState(d, 'demo', token, 'stopped.idle');
  assert.not.ok(alive(before.pid!), 'server exited');
  // It left because it was asked to by POST /update (the demo server's own line, echoed by the daemon), not killed.
  assert.match(d.log().slice(from), /update received \(UpdateAvailable\)/);
  assert.not.match(d.log().slice(from), /shutdown requested|SIGKILL/);
  await waitFor('stop notification', () =>
    hook!.messages
      .slice(sent)
      .some((m) => /^Server `demo` was stopped on request \(with its API token from 127\.0\.0\.1\)\.$/.test(m.content)),
  );
  assert.is((await d.status('demo', token)).state, 'stopped.idle', 'still stopped');
  assert.is(await d.control('demo', token, 'restart'), 200);
  const back = await running(d);
  assert.is.not(back.pid, before.pid);
  // Not relaunched on its own: between the stop request and the restart request the log shows no launch.
  const between = d.log().slice(from);
  const restartAt = between.indexOf('control: restart');
  assert.ok(restartAt > 0, 'the restart request is logged');
  assert.not.match(between.slice(0, restartAt), /server launched/, 'no launch while stopped');
});

test('lifecycle :: SIGKILL of the server: relaunched, and the webhook names the signal', async ({ daemon, hook }) => {
  const d = daemon!;
  const before = await running(d);
  const sent = hook!.messages.length;
  process.kill(before.pid!, 'SIGKILL');
  await running(d, before.pid);
  await waitFor('crash notification', () =>
    hook!.messages.slice(sent).some((m) => /`demo`/.test(m.content) && /SIGKILL/.test(m.content)),
  );
});

test('lifecycle :: SIGSTOP of the server: killed TimeoutSeconds after its last check-in, not before, relaunched, webhook', async ({
  daemon,
  hook,
}) => {
  const d = daemon!;
  const timeoutMs = TIMEOUT_SECONDS * 1000;
  const before = await running(d);
  const sent = hook!.messages.length;
  const from = d.log().length;

  // Freeze it right after a check-in the daemon has counted (read at most FRESH_MS after it), so the hang deadline is
  // about SIGSTOP + TimeoutSeconds. A check-in already in flight can only move it later. How long the signal itself
  // took on a loaded machine is not asserted: the deadline below is measured from the check-in, not from the signal.
  const FRESH_MS = 250;
  let lastCheckin = 0;
  await waitFor(
    'a fresh check-in to freeze the server after',
    async () => {
      const s = await d.status('demo', token);
      if (s.pid !== before.pid || !s.lastCheckinAt)
        throw new Error(`server changed under the test: ${JSON.stringify(s)}`);
      const at = Date.parse(s.lastCheckinAt);
      if (Date.now() - at > FRESH_MS) return false;
      process.kill(before.pid!, 'SIGSTOP');
      lastCheckin = at;
      return true;
    },
    10_000,
    10,
  );
  await waitFor('the server to be stopped (state T)', () => procState(before.pid!) === 'T', 2000, 5);

  await waitFor('the frozen server to be killed', () => gone(before.pid!), timeoutMs + 20_000, 20);
  // Not before the deadline, by the daemon's own clock: its hang line is stamped no earlier than TimeoutSeconds
  // after the last check-in it counted (10 ms for clock rounding). A loaded machine can only make it later.
  const hangLine = d
    .log()
    .slice(from)
    .split('\n')
    .filter((l) => l.includes('Server `demo` timed out and will be killed'));
  assert.is(hangLine.length, 1, `one hang declared: ${hangLine.join('\n')}`);
  const declaredAt = Date.parse(hangLine[0]!.slice(0, hangLine[0]!.indexOf(' ')));
  assert.ok(
    declaredAt - lastCheckin >= timeoutMs - 10,
    `hang declared ${declaredAt - lastCheckin} ms after the last check-in (TimeoutSeconds ${timeoutMs} ms)`,
  );

  const next = await running(d, before.pid);
  assert.ok(alive(next.pid!), 'the new server is alive');
  assert.is(next.revision, '1', 'a hang relaunch installs no update');
  assert.is(next.restarts, before.restarts + 1, 'one kill, one relaunch');
  // Killed outright: a frozen server is sent no shutdown request it could never answer.
  assert.not.match(d.log().slice(from), /shutdown request|shutting down/, 'no graceful shutdown of a frozen server');
  await waitFor('hang notification', () => hook!.messages.slice(sent).some((m) => /`demo`.*timed out/.test(m.content)));
});

test.run();
