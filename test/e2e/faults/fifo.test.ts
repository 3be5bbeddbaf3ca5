import { spawnSync } from 'node:child_process';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { basic, daemonSuite, type RunningDaemon } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { killGroup, logLines, running, waitStatus } from '../resilience/_support/daemon-crash.ts';

/**
 * A named pipe where the daemon expects a file (the server writes its instance folder; a secrets tool writes the
 * configuration folder) froze it: an open of a FIFO waits for its other end, on the main thread (server.log,
 * config.toml) or on a thread-pool thread for good (a shared file, a configuration layer). Now each is refused at
 * once with an error naming the file, and the daemon keeps answering, relaunching and reloading.
 */
const MKFIFO = spawnSync('mkfifo', ['--version']).error === undefined;

function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path]);
  if (r.status !== 0) throw new Error(`mkfifo ${path} failed: ${r.stderr.toString()}`);
}

const KEY = 'pipes';
const AUTH = { authorization: basic(KEY, 'tok') };

interface Ctx {
  yaml: string;
  pid: number | null;
  reloads: number;
}

/** A GET with a deadline far past a refusal's time: a request parked on a pipe must fail the test, not stall it. */
const get = (d: RunningDaemon, path: string, timeoutMs = 5000) =>
  fetch(`${d.url}${path}`, { headers: AUTH, signal: AbortSignal.timeout(timeoutMs) });

/**
 * The daemon is not frozen: `/health` answers within 1 s (a frozen daemon never does; three tries let a loaded
 * machine miss one), a killed server is relaunched, and a later change of appsettings.yml is applied.
 */
async function stillServes(ctx: Ctx & { daemon?: RunningDaemon; dir: string }): Promise<void> {
  const d = ctx.daemon!;
  let health = 0;
  for (let i = 0; i < 3 && health !== 200; i++)
    health = await get(d, '/health', 1000).then(
      (r) => r.status,
      () => 0,
    );
  assert.is(health, 200, '/health answers within 1 s');

  const before = await waitStatus(d, KEY, 'tok', 'server.running', running);
  process.kill(before.pid!, 'SIGKILL');
  const after = await waitStatus(d, KEY, 'tok', 'relaunched', (s) => running(s) && s.pid !== before.pid);
  ctx.pid = after.pid;

  ctx.reloads += 1;
  const seen = logLines(d, /configuration reloaded/).length;
  await writeFile(
    join(ctx.dir, 'appsettings.yml'),
    ctx.yaml.replace(/TimeoutSeconds: \d+/, `TimeoutSeconds: ${30 + ctx.reloads}`),
  );
  await waitFor('a later reload applied', () => logLines(d, /configuration reloaded/).length > seen, 15_000);
}

/** One daemon with one instance per case; `prepare` may put a pipe in the instance folder before it starts. */
function pipeSuite(
  name: string,
  opts: { server?: string; extra?: string; prepare?: (instanceDir: string) => Promise<void> },
) {
  return daemonSuite<Ctx>(`e2e :: faults: a named pipe as ${name}`, {
    prefix: 'wd-fifo-',
    ctx: { yaml: '', pid: null, reloads: 0 },
    config: async (ctx) => {
      await opts.prepare?.(join(ctx.dir, 'instances', KEY));
      ctx.yaml = testConfig({
        instances: [{ key: KEY, port: await freePort(), runCommand: opts.server ?? fixture('echo-env.mjs') }],
        extra: `  LogRetrySeconds: 0.2${opts.extra ?? ''}`,
      });
      return ctx.yaml;
    },
    after: (ctx) => killGroup(ctx.pid),
  });
}

if (!MKFIFO) {
  console.log('  (skipped: no mkfifo on this machine)');
} else {
  const log = pipeSuite('server.log', { server: fixture('chatty.mjs') });
  log(
    'fifo :: a pipe in place of server.log is refused as a write outage; the log tail reads it as missing',
    async (ctx) => {
      const d = ctx.daemon!;
      ctx.pid = (await waitStatus(d, KEY, 'tok', 'server.running', running)).pid;
      const file = join(ctx.dir, 'instances', KEY, 'logs', 'server.log');
      // The server replaces its log with a pipe: the writer's next check finds a new file there and reopens it.
      mkfifo(`${file}.new`);
      await rename(`${file}.new`, file);
      await waitFor('the outage logged', () => /cannot write \S+server\.log \(ENOTREG\)/.test(d.log()), 10_000);
      const tail = await get(d, `/instances/${KEY}/logs?lines=5`);
      assert.ok(tail.status < 500, `the log tail answers (${tail.status})`);
      await tail.arrayBuffer();
      await stillServes(ctx);
      assert.is(logLines(d, /cannot write \S+server\.log/).length, 1, 'said once, relaunch included');
    },
  );
  log.run();

  const toml = pipeSuite('config.toml', {
    prepare: async (dir) => {
      await mkdir(dir, { recursive: true });
      mkfifo(join(dir, 'config.toml'));
    },
  });
  toml('fifo :: the hub watch refuses a pipe as config.toml and names it', async (ctx) => {
    const d = ctx.daemon!;
    ctx.pid = (await waitStatus(d, KEY, 'tok', 'server.running', running)).pid;
    await waitFor('the refusal logged', () => /cannot read the hub settings/.test(d.log()), 10_000);
    assert.match(
      logLines(d, /cannot read the hub settings/)[0]!,
      /config\.toml is not a regular file \(a named pipe\)/,
    );
    await stillServes(ctx);
  });
  toml.run();

  const shared = pipeSuite('a shared file', {
    prepare: async (dir) => {
      await mkdir(join(dir, 'data', 'replays'), { recursive: true });
      mkfifo(join(dir, 'data', 'replays', 'round.pipe'));
    },
  });
  shared('fifo :: downloads of a pipe in a shared folder are refused at once, none parks a thread', async (ctx) => {
    const d = ctx.daemon!;
    ctx.pid = (await waitStatus(d, KEY, 'tok', 'server.running', running)).pid;
    // More than the thread pool's 4 threads: each would park one in a blocking open.
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        get(d, `/instances/${KEY}/files/data/replays/round.pipe`).then(
          async (r) => ({ status: r.status, body: await r.text() }),
          (err: unknown) => ({ status: 0, body: String(err) }),
        ),
      ),
    );
    for (const a of answers) {
      assert.is(a.status, 403, a.body);
      assert.match(a.body, /data\/replays\/round\.pipe: not a regular file or folder/);
    }
    await stillServes(ctx);
  });
  shared.run();

  const layer = pipeSuite('a configuration layer', {});
  layer(
    'fifo :: a pipe as appsettings.Secret.yml refuses that reload, named; later reloads are applied',
    async (ctx) => {
      const d = ctx.daemon!;
      ctx.pid = (await waitStatus(d, KEY, 'tok', 'server.running', running)).pid;
      const secret = join(ctx.dir, 'appsettings.Secret.yml');
      mkfifo(secret);
      await waitFor(
        'the refusal logged',
        () => /appsettings\.Secret\.yml: cannot read the file \(it is not a regular file\)/.test(d.log()),
        10_000,
      );
      await rm(secret);
      await stillServes(ctx);
    },
  );
  layer.run();
}
