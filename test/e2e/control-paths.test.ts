/**
 * The two control paths answer alike: `POST /instances/<key>/<verb>` (the instance's ApiToken) and the dashboard's
 * `POST /api/instances/<key>/<verb>` (Admin, here the loopback, and the dashboard's header) give the same status and
 * error text for every verb in every state an operator can meet, and the status's `controls` (what the dashboard's
 * buttons show) announce those answers.
 *
 * Each state has a pair of identical instances, one asked through each path, so both get the same requests in the
 * same order; after a verb was taken, both are brought back to the state before the next one. States that would pass
 * in a moment are held by real fixtures, not by timing: a server that never checks in (starting), a loopback CDN
 * that stalls the build (updating), a server that ignores /shutdown (stopping, and the stop before a rollback), the
 * game port held by this process (launch blocked), a server that exits at once (stopped after failing), one that
 * exits a second after checking in (the back-off after a crash, made long), a `Backups.Sqlite3Path` that waits for
 * the test's word (restoring: the snapshot a restore takes first of a database in data/), and a server that ignores
 * /shutdown holding the daemon's own exit (exited: the other instances are done while the daemon still answers).
 * Every instance has a backup of its own, so a `restore` is refused only by the state it meets.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type InstanceOpts, testConfig } from '../_support/config.ts';
import { basic, type RunningDaemon, withDaemons } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import { killGroup } from '../_support/procs.ts';
import { type Cdn, startCdn } from '../fixtures/archives/serve.ts';
import { manifestDoc } from '../fixtures/builds/build.ts';

const test = suite('e2e control paths :: both routes answer alike');
const TOKEN = 'tok';
/** Release before and after a hold: refused with nothing held, then taken. Restore last: taken, it puts data back. */
const VERBS = ['release', 'hold', 'release', 'restart', 'update', 'stop', 'rollback', 'restore'] as const;
type Verb = (typeof VERBS)[number];

/** What a status poll reads here. */
interface Status {
  state: string;
  pid: number | null;
  lastCheckinAt: string | null;
  checking?: boolean;
  stopRequested: boolean;
  /** Per control action, what the daemon says it would answer now. */
  controls?: Record<string, { allowed: boolean; reason: string | null }>;
}

/** One answer, reduced to what both paths must share: the status, and the error text or `taken`. */
type Answer = `${number} ${string}`;

interface Harness {
  d: RunningDaemon;
  /** The query a verb is sent with on instance `key`: a restore names that instance's backup (see `takeBackups`). */
  query(key: string, verb: Verb): string;
  status(key: string): Promise<Status>;
  /** Sends `verb` through the ApiToken path: how the pairs are brought into their states. */
  ctl(key: string, verb: Verb): Promise<number>;
  /** Polls until `pred` holds (bounded), and returns that status. */
  until(key: string, what: string, pred: (s: Status) => boolean, timeoutMs?: number): Promise<Status>;
}

function harness(d: RunningDaemon, backups: ReadonlyMap<string, string> = new Map()): Harness {
  const status = async (key: string) => (await d.status(key, TOKEN)) as unknown as Status;
  const query = (key: string, verb: Verb) => (verb === 'restore' ? `?backup=${backups.get(key) ?? 'none'}` : '');
  return {
    d,
    query,
    status,
    ctl: (key, verb) => d.control(key, TOKEN, `${verb}${query(key, verb)}`),
    async until(key, what, pred, timeoutMs = 30_000) {
      let last: Status | undefined;
      try {
        return await waitFor(
          `${key} ${what}`,
          async () => {
            last = await status(key);
            return pred(last) ? last : undefined;
          },
          timeoutMs,
          100,
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}; last seen ${JSON.stringify(last)}`, { cause: err });
      }
    },
  };
}

/** The state names, loosely: a status shows the machine's state path, whose outer names may change. */
const is = (re: RegExp) => (s: Status) => re.test(s.state) && s.checking !== true;
const stoppedIdle = is(/^stopped(\.idle)?$/);
const failing = is(/(^|\.)failing$/);
const starting = (s: Status) => is(/(^|\.)starting$/)(s) && s.pid !== null;
const running = (s: Status) =>
  is(/(^|\.)running$/)(s) && s.pid !== null && s.lastCheckinAt !== null && !s.stopRequested;
const backoff = is(/(^|\.)backoff$/);
const restoring = is(/^restoring$/);
const exited = is(/^exited$/);
const blocked = is(/(^|\.)blocked$/);
// An update in progress counts as a check asked for (`checking`).
const updating = (s: Status) => /(^|\.)updating/.test(s.state);
/** Being stopped, its server still there: a stop asked of a running server (which may show as running still). */
const stopping = (s: Status) =>
  s.pid !== null && (is(/(^|\.)stopping$/)(s) || (is(/(^|\.)running$/)(s) && s.stopRequested));

/**
 * A state an operator can meet: its instances' settings, and how to bring one into it from wherever a verb left it:
 * wait for `target` (`label` names the wait, by default `name`), taking each step's control request from the
 * state it names on the way.
 */
interface StateCase {
  name: string;
  instance: Omit<InstanceOpts, 'key' | 'port'>;
  target: (s: Status) => boolean;
  steps: Array<[(s: Status) => boolean, Verb]>;
  label?: string;
}

/** Brings instance `key` into the state of `c`: waits for its target, or for a step's state, and takes the step. */
async function enter(h: Harness, key: string, c: StateCase): Promise<void> {
  const name = c.label ?? c.name;
  for (let i = 0; i <= c.steps.length + 1; i++) {
    const s = await h.until(
      key,
      `${name} (or a state leading there)`,
      (x) => c.target(x) || c.steps.some(([p]) => p(x)),
    );
    if (c.target(s)) return;
    const step = c.steps.find(([p]) => p(s));
    if (step) await h.ctl(key, step[1]);
  }
  await h.until(key, name, c.target);
}

const DUMMY_NOW = '      UpdateType: Dummy\n      Maintenance:\n        When: Now';
/** A server that checks in and obeys /shutdown: all the demo server would do here, for half its start-up CPU. */
const WELL = { runCommand: fixture('log-starts.mjs'), extra: DUMMY_NOW };
/** A server that ignores the request to shut down: its stop lasts the whole stop timeout. */
const IGNORES_SHUTDOWN = { runCommand: fixture('ignore-shutdown.mjs'), extra: DUMMY_NOW };

/**
 * A `sqlite3` for `Backups.Sqlite3Path` that fails once `go` is there, and until then waits (10 min at most): a
 * snapshot of a database in data/, and so a restore, which snapshots the data it replaces first, stays under way.
 */
async function writeGate(dir: string): Promise<{ program: string; release: () => Promise<void> }> {
  const go = join(dir, 'go');
  const program = join(dir, 'sqlite3-gate');
  await writeFile(
    program,
    `#!/bin/sh\ni=0\nwhile [ ! -e '${go}' ] && [ $i -lt 3000 ]; do sleep 0.2; i=$((i+1)); done\nexit 1\n`,
  );
  await chmod(program, 0o755);
  // Also after the test's folder is gone (a daemon that stopped already let the gate go, or never reached it).
  return { program, release: () => writeFile(go, '').catch(() => undefined) };
}

/** What the SQLite header makes a database for the snapshot (its rest is never read: the gate copies nothing). */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** States on a daemon with short timings (the testConfig defaults, two startup failures give up). */
function quickStates(manifestUrl: string, sqlite3Gate: string): StateCase[] {
  return [
    { name: 'stopped', instance: WELL, target: stoppedIdle, steps: [[running, 'stop']] },
    {
      name: 'failing',
      instance: { runCommand: fixture('exit-at-once.sh'), extra: DUMMY_NOW },
      target: failing,
      steps: [],
      label: 'stopped after failing',
    },
    {
      name: 'starting',
      instance: {
        runCommand: fixture('checkin-late.mjs'),
        timeoutSeconds: 600,
        extra: `${DUMMY_NOW}\n      EnvironmentVariables:\n        CHECKIN_DELAY_MS: "600000"`,
      },
      target: starting,
      steps: [[stoppedIdle, 'restart']],
    },
    { name: 'running', instance: WELL, target: running, steps: [[stoppedIdle, 'restart']] },
    {
      // The build's download stalls: the first install before the first launch stays in progress.
      name: 'updating',
      instance: {
        extra: [
          '      UpdateType: Manifest',
          '      Updates:',
          `        ManifestUrl: ${manifestUrl}`,
          '        Platform: linux-x64',
          '        DownloadTimeoutSeconds: 900',
        ].join('\n'),
      },
      target: updating,
      steps: [],
    },
    {
      // Its restore waits on the gate while it snapshots the database put in data/ after its backup was taken.
      name: 'restoring',
      instance: { ...WELL, extra: `${DUMMY_NOW}\n      Backups:\n        Sqlite3Path: ${JSON.stringify(sqlite3Gate)}` },
      target: restoring,
      steps: [[running, 'restore']],
    },
  ];
}

/** States on a daemon whose back-offs and stop timeouts outlast the test, so they hold once reached. */
function slowStates(): StateCase[] {
  return [
    {
      // The server checks in, then exits after a second: the second such crash in a row waits out the back-off.
      name: 'backoff',
      instance: {
        runCommand: fixture('checkin-late.mjs'),
        extra: `${DUMMY_NOW}\n      EnvironmentVariables:\n        CHECKIN_DELAY_MS: "0"\n        FIXTURE_LIFETIME_MS: "1000"`,
      },
      target: backoff,
      steps: [[stoppedIdle, 'restart']],
      label: 'restarting back-off',
    },
    // The game port is held by this process (see the test), so every launch is blocked.
    {
      name: 'blocked',
      instance: WELL,
      target: blocked,
      steps: [[stoppedIdle, 'restart']],
      label: 'launch blocked',
    },
    {
      name: 'stopping',
      instance: IGNORES_SHUTDOWN,
      target: stopping,
      steps: [
        [running, 'stop'],
        [stoppedIdle, 'restart'],
      ],
    },
    {
      // A rollback stops the server first; bin.prev is there (see the test), so a rollback is taken.
      name: 'rolling-back',
      instance: IGNORES_SHUTDOWN,
      target: stopping,
      steps: [
        [running, 'rollback'],
        [stoppedIdle, 'restart'],
      ],
      label: 'stopping for a rollback',
    },
  ];
}

/** `yaml` with back-offs and stop timeouts that outlast the test. */
const slowTimings = (yaml: string) =>
  yaml.replace(
    /Timing:\n(?: {2}\S.*\n)*/,
    [
      'Timing:',
      '  ShutdownRequestSeconds: 900',
      '  ShutdownExitSeconds: 900',
      '  BackoffInitialSeconds: 900',
      '  BackoffMaxSeconds: 900',
      '  StableRunSeconds: 30',
      '  StartupFailureLimit: 100',
      '  RejectedCheckinLogSeconds: 0',
      '',
    ].join('\n'),
  );

const pairOf = (name: string) => ({ api: `${name}-api`, ui: `${name}-ui` });

/** Takes a backup of each of `keys` (its ApiToken path) and records its id as the one its `restore` names. */
async function takeBackups(d: RunningDaemon, keys: string[], into: Map<string, string>): Promise<void> {
  for (const key of keys) {
    const res = await fetch(`${d.url}/instances/${key}/backups`, {
      method: 'POST',
      headers: { authorization: basic(key, TOKEN) },
    });
    const body = (await res.json()) as { id?: string; error?: string };
    assert.is(res.status, 200, `a backup of ${key}: ${body.error}`);
    into.set(key, body.id ?? '');
  }
}

/** `verb` through the ApiToken path: its answer, and whether an accepted one had the route's own body (empty). */
async function viaApiToken(h: Harness, key: string, verb: Verb): Promise<Answer> {
  const res = await fetch(`${h.d.url}/instances/${key}/${verb}${h.query(key, verb)}`, {
    method: 'POST',
    headers: { authorization: basic(key, TOKEN) },
  });
  const text = await res.text();
  if (res.status === 200) return `200 ${text === '' ? 'taken' : `unexpected body ${text}`}`;
  return `${res.status} ${(JSON.parse(text) as { error: string }).error}`;
}

/** `verb` as the dashboard sends it (from the loopback, no Admin configured, with its header). */
async function viaDashboard(h: Harness, key: string, verb: Verb): Promise<Answer> {
  const res = await fetch(`${h.d.url}/api/instances/${key}/${verb}${h.query(key, verb)}`, {
    method: 'POST',
    headers: { 'x-watchdog-dashboard': '1' },
  });
  const body = (await res.json()) as { error?: string; accepted?: boolean; key?: string; action?: string };
  if (res.status === 200)
    return `200 ${body.accepted === true && body.key === key && body.action === verb ? 'taken' : `unexpected body ${JSON.stringify(body)}`}`;
  return `${res.status} ${body.error}`;
}

/**
 * Every verb in `c`'s state through both paths: the answers as `state verb: status text`, per path; and for the
 * control actions, the answer the status's `controls` announced just before (what the dashboard's buttons show).
 */
async function drive(
  h: Harness,
  c: StateCase,
): Promise<{ api: string[]; ui: string[]; announced: string[]; controlAnswers: string[] }> {
  const { api, ui } = pairOf(c.name);
  const out = { api: [] as string[], ui: [] as string[], announced: [] as string[], controlAnswers: [] as string[] };
  for (const verb of VERBS) {
    await Promise.all([enter(h, api, c), enter(h, ui, c)]);
    const choice = (await h.status(api)).controls?.[verb];
    const [a, b] = await Promise.all([viaApiToken(h, api, verb), viaDashboard(h, ui, verb)]);
    out.api.push(`${c.name} ${verb}: ${a}`);
    out.ui.push(`${c.name} ${verb}: ${b}`);
    if (verb === 'hold' || verb === 'release') continue;
    out.announced.push(
      `${c.name} ${verb}: ${choice === undefined ? 'none' : choice.allowed ? '200 taken' : `409 ${choice.reason}`}`,
    );
    out.controlAnswers.push(`${c.name} ${verb}: ${a}`);
  }
  return out;
}

/** The instances of `cases`, a pair each, on free ports. */
async function pairs(cases: StateCase[]): Promise<InstanceOpts[]> {
  const out: InstanceOpts[] = [];
  for (const c of cases) {
    const { api, ui } = pairOf(c.name);
    for (const key of [api, ui]) out.push({ ...c.instance, key, port: await freePort() });
  }
  return out;
}

/** Ends the servers the daemon still runs (the ones ignoring /shutdown would hold its stop for the slow timeout). */
async function killServers(h: Harness, cases: StateCase[]): Promise<void> {
  for (const c of cases)
    for (const key of Object.values(pairOf(c.name))) killGroup((await h.status(key).catch(() => null))?.pid);
}

const listen = (port: number): Promise<Server> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

/**
 * Waits until the daemon started every instance of `cases`, and takes a backup of each (into `backups`, which the
 * harness's restores name). Until the daemon starts an instance, its status is the machine's first state,
 * stopped.idle: a step taken then would be spent before the instance is anywhere.
 */
async function started(h: Harness, cases: StateCase[], backups: Map<string, string>): Promise<void> {
  const keys = cases.flatMap((c) => Object.values(pairOf(c.name)));
  const begun = (k: string) => new RegExp(`\\[watchdog:${k}\\] state \\S+ from=stopped\\.idle`).test(h.d.log());
  await waitFor('every instance started by the daemon', () => keys.every(begun) || undefined, 30_000);
  await takeBackups(h.d, keys, backups);
}

/**
 * Drives every state of `cases` at once and asserts both paths answered alike, with the route's own body when taken,
 * and that some answers were among them (`expected`: the beginnings of rows), so a refusal is really exercised;
 * then ends the servers still running.
 */
async function driveAlike(h: Harness, cases: StateCase[], expected: string[]): Promise<void> {
  try {
    const rows = await Promise.all(cases.map((c) => drive(h, c))).catch((err: unknown) => {
      console.error(h.d.log().slice(-4000));
      throw err;
    });
    const api = rows.flatMap((r) => r.api);
    const ui = rows.flatMap((r) => r.ui);
    assert.equal(ui, api, 'the dashboard path answers as the ApiToken path');
    assert.equal(
      rows.flatMap((r) => r.announced),
      rows.flatMap((r) => r.controlAnswers),
      "the status's controls announce the answers",
    );
    assert.not.ok(
      api.some((a) => a.includes('unexpected body')),
      api.join('\n'),
    );
    for (const row of expected)
      assert.ok(
        api.some((a) => a.startsWith(row)),
        `${row} among:\n${api.join('\n')}`,
      );
  } finally {
    await killServers(h, cases);
  }
}

/** The restore cells of states that take it. */
const restoreTaken = (...states: string[]) => states.map((name) => `${name} restore: 200 taken`);
const BUSY_RESTORING = '409 a backup is being restored';

test('control paths :: stopped, stopped after failing, starting, running, updating, restoring: the same answers', async () => {
  let cdn: Cdn | undefined;
  let release = async () => {};
  try {
    await withDaemons({ prefix: 'wd-paths-' }, async (s) => {
      const gate = await writeGate(s.dir);
      release = gate.release;
      cdn = await startCdn();
      const build = join(s.dir, 'build.zip');
      await writeFile(build, Buffer.alloc(64 * 1024, 1));
      cdn.set('/build.zip', { kind: 'stall', file: build, sendBytes: 1024 });
      const doc = manifestDoc([
        { key: 'b1', time: '2024-05-01T10:00:00Z', url: cdn.url('/build.zip'), sha256: 'a'.repeat(64) },
      ]);
      cdn.set('/manifest', { kind: 'json', body: doc });
      const cases = quickStates(cdn.url('/manifest'), gate.program);
      const yaml = testConfig({ instances: await pairs(cases), extra: '  StartupFailureLimit: 2' });
      const backups = new Map<string, string>();
      const h = harness(await s.start(yaml), backups);
      await started(h, cases, backups);
      // After their backups: the restoring pair's restore snapshots a database, which waits on the gate.
      for (const key of Object.values(pairOf('restoring'))) {
        const data = join(s.dir, 'instances', key, 'data');
        await mkdir(data, { recursive: true });
        await writeFile(join(data, 'world.db'), SQLITE_HEADER);
      }
      try {
        await driveAlike(h, cases, [
          'updating rollback: 409',
          'running restart: 200',
          ...restoreTaken('stopped', 'failing', 'starting', 'running'),
          'updating restore: 409 an update is being installed; roll back once it is done',
          ...['restart', 'rollback', 'restore'].map((verb) => `restoring ${verb}: ${BUSY_RESTORING}`),
          // What the restore leaves alone: the update check, the stop it keeps for its end, a hold.
          ...['hold', 'update', 'stop'].map((verb) => `restoring ${verb}: 200 taken`),
        ]);
        const still = await h.status('restoring-api');
        assert.ok(restoring(still), `still restoring at the end: ${JSON.stringify(still)}`);
      } finally {
        // The daemon's exit waits for a restore under way.
        await release();
      }
    });
  } finally {
    await release();
    await cdn?.close();
  }
});

test('control paths :: restarting back-off, launch blocked, stopping, stopping for a rollback: the same answers', async () => {
  const held: Server[] = [];
  try {
    await withDaemons({ prefix: 'wd-paths-' }, async (s) => {
      const cases = slowStates();
      const instances = await pairs(cases);
      for (const i of instances) {
        if (i.key?.startsWith('blocked-')) held.push(await listen(i.port));
        if (i.key?.startsWith('rolling-back-')) {
          const prev = join(s.dir, 'instances', i.key, 'bin.prev');
          await mkdir(prev, { recursive: true });
          await writeFile(join(prev, 'README'), 'the build before\n');
        }
      }
      const backups = new Map<string, string>();
      const h = harness(await s.start(slowTimings(testConfig({ instances }))), backups);
      await started(h, cases, backups);
      await driveAlike(h, cases, [
        'backoff rollback: 409',
        'rolling-back rollback: 200',
        'backoff restore: 409 the server is between crash relaunches; stop the instance, then roll back',
        'blocked restore: 409 the launch is blocked and retried with back-off; stop the instance, then roll back',
        ...restoreTaken('stopping', 'rolling-back'),
      ]);
    });
  } finally {
    for (const server of held) server.close();
  }
});

test('control paths :: exited, the daemon stopping: every action refused alike', async () => {
  await withDaemons({ prefix: 'wd-paths-' }, async (s) => {
    // Its server ignores /shutdown, and so holds the daemon's exit (900 s) while the others are done.
    const holder = { key: 'holder', port: await freePort(), ...IGNORES_SHUTDOWN };
    const cases: StateCase[] = [{ name: 'exited', instance: WELL, target: exited, steps: [] }];
    const instances = [...(await pairs(cases)), holder];
    const backups = new Map<string, string>();
    const h = harness(await s.start(slowTimings(testConfig({ instances }))), backups);
    await started(h, cases, backups);
    const holding = await h.until('holder', 'running', running);
    for (const key of Object.values(pairOf('exited'))) await h.until(key, 'running', running);
    try {
      h.d.proc.kill('SIGTERM');
      // A hold too: the machine is done, so a hold taken would be dropped unseen.
      await driveAlike(h, cases, [
        ...['hold', 'restart', 'update', 'stop', 'rollback', 'restore'].map(
          (verb) => `exited ${verb}: 409 the watchdog is shutting down`,
        ),
        'exited release: 409 nothing is held for this instance',
      ]);
    } finally {
      killGroup(holding.pid);
    }
  });
});

test.run();
