import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type CliResult, runMain } from '../../_support/cli.ts';
import { testConfig } from '../../_support/config.ts';
import { type RunningDaemon, startDaemon } from '../../_support/daemon.ts';
import { freePort, tempDir, waitFor } from '../../_support/env.ts';
import { fixture, writeServerScript } from '../../_support/fixtures.ts';

/**
 * Control tells the truth: what the daemon can tell at once is refused at once (409 with the reason, exit
 * 1, audited as refused), and `--wait` follows the instance to the outcome. `demo` runs the demo server without an
 * update provider and without `bin.prev`; `broken` runs a server that exits before checking in.
 */
interface Ctx {
  daemon?: RunningDaemon;
  cleanup: () => Promise<void>;
}
const test = suite<Ctx>('watchdog CLI :: control refusals and --wait', { cleanup: async () => {} });

test.before(async (ctx) => {
  try {
    const dir = await tempDir('wd-cli-control-');
    ctx.cleanup = dir.cleanup;
    const broken = await writeServerScript(join(dir.path, 'broken.sh'), fixture('exit-at-once.sh'));
    const polite = await writeServerScript(join(dir.path, 'polite.sh'), fixture('log-starts.mjs'));
    ctx.daemon = await startDaemon(
      testConfig({
        instances: [
          { key: 'demo', port: await freePort(), token: 'tok', timeoutSeconds: 3 },
          { key: 'broken', port: await freePort(), token: 'tok-broken', runCommand: broken },
          // Dummy: every check finds revision + 1; the server leaves on POST /update and comes back on it.
          {
            key: 'dummy',
            port: await freePort(),
            token: 'tok-dummy',
            runCommand: polite,
            extra: '      UpdateType: Dummy',
          },
        ],
      }),
      { dir: dir.path },
    );
  } catch (err) {
    console.error(err);
    throw err;
  }
});
test.after(async (ctx) => {
  await ctx.daemon?.stop();
  await ctx.cleanup();
});

const d = (ctx: Ctx) => ctx.daemon!;
const cli = (ctx: Ctx, args: string[], timeoutMs = 30_000): Promise<CliResult> =>
  runMain([...args, '--url', d(ctx).url], { cwd: d(ctx).dir, timeoutMs });
const running = (ctx: Ctx) =>
  waitFor(
    'demo running',
    async () => {
      const s = await d(ctx).status('demo', 'tok');
      return s.state === 'server.running' && s.pid !== null ? s : undefined;
    },
    20_000,
  );
const audit = async (ctx: Ctx) =>
  (await readFile(join(d(ctx).dir, 'logs/audit.log'), 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map(
      (l) => JSON.parse(l) as { key: string; action: string; status: number; result: string; reason: string | null },
    );

test('control :: update without a provider and rollback without bin.prev: exit 1 naming the reason; the audit says refused and why', async (ctx) => {
  const before = await running(ctx);
  const update = await cli(ctx, ['update', 'demo']);
  assert.is(update.code, 1, update.stdout);
  assert.match(update.stderr, /update refused for instance demo: no update provider/);
  const rollback = await cli(ctx, ['rollback', 'demo']);
  assert.is(rollback.code, 1, rollback.stdout);
  assert.match(rollback.stderr, /rollback refused for instance demo: no previous build .*bin\.prev/);
  const lines = await waitFor('both audited', async () => {
    const all = (await audit(ctx)).filter(
      (l) => l.key === 'demo' && (l.action === 'update' || l.action === 'rollback'),
    );
    return all.length >= 2 ? all : undefined;
  });
  for (const l of lines) {
    assert.is(l.result, 'refused');
    assert.is(l.status, 409);
  }
  assert.match(lines.find((l) => l.action === 'update')?.reason ?? '', /no update provider/);
  assert.match(lines.find((l) => l.action === 'rollback')?.reason ?? '', /bin\.prev/);
  assert.is((await d(ctx).status('demo', 'tok')).pid, before.pid, 'nothing happened to the server');
});

test('control :: rollback after Dummy updates says that a Dummy update keeps no build', async (ctx) => {
  const res = await fetch(`${d(ctx).url}/instances/dummy/rollback`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('dummy:tok-dummy').toString('base64')}` },
  });
  assert.is(res.status, 409);
  const body = (await res.json()) as { error?: string };
  assert.match(body.error ?? '', /UpdateType Dummy only restarts the server and keeps no build in bin\.prev/);
});

test('control :: the HTTP answer itself: 409 with JSON {error}', async (ctx) => {
  await running(ctx);
  const res = await fetch(`${d(ctx).url}/instances/demo/rollback`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('demo:tok').toString('base64')}` },
  });
  assert.is(res.status, 409);
  const body = (await res.json()) as { error?: string };
  assert.match(body.error ?? '', /no previous build/);
});

test('control :: restart --wait: reports the new pid and revision with the time it took, exit 0', async (ctx) => {
  const before = await running(ctx);
  const r = await cli(ctx, ['restart', 'demo', '--wait', '--timeout', '25']);
  assert.is(r.code, 0, r.stderr);
  const m = /restart of demo done: running, pid (\d+), revision \S+ \((\d+(\.\d)?) s\)/.exec(r.stdout);
  assert.ok(m, r.stdout);
  assert.is.not(Number(m![1]), before.pid);
  assert.is((await d(ctx).status('demo', 'tok')).pid, Number(m![1]));
});

test('control :: stop --wait then restart --wait --json: stopped, then running with a new pid', async (ctx) => {
  const before = await running(ctx);
  const stop = await cli(ctx, ['stop', 'demo', '--wait', '--timeout', '25']);
  assert.is(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /stop of demo done: stopped \(\d+(\.\d)? s\)/);
  const start = await cli(ctx, ['restart', 'demo', '--wait', '--json']);
  assert.is(start.code, 0, start.stderr);
  const out = JSON.parse(start.stdout) as { ok: boolean; state: string; pid: number; seconds: number };
  assert.is(out.ok, true);
  assert.is(out.state, 'server.running');
  assert.is.not(out.pid, before.pid);
  assert.type(out.seconds, 'number');
});

test('control :: restart --wait on a server that fails to start: exit 1 saying it is failing and why', async (ctx) => {
  await waitFor(
    'broken gave up',
    async () => (await d(ctx).status('broken', 'tok-broken')).state === 'stopped.failing',
    20_000,
  );
  const r = await cli(ctx, ['restart', 'broken', '--wait', '--token', 'tok-broken']);
  assert.is(r.code, 1, r.stdout);
  assert.match(
    r.stdout,
    // The server's last line (stderr, here) says why, in the CLI's own output.
    /restart of broken failed: failing to start \(3 startup failures; last exit: crash, exit code \d+: exit-at-once: giving up\)/,
  );
});

test('control :: update --wait with a provider: 200 at once, then running again with a new pid on the new revision', async (ctx) => {
  const before = await waitFor(
    'dummy running',
    async () => {
      const s = await d(ctx).status('dummy', 'tok-dummy');
      return s.state === 'server.running' && s.pid !== null ? s : undefined;
    },
    20_000,
  );
  const r = await cli(ctx, ['update', 'dummy', '--wait', '--token', 'tok-dummy', '--json']);
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { ok: boolean; state: string; pid: number; revision: string };
  assert.is(out.ok, true);
  assert.is(out.state, 'server.running');
  assert.is.not(out.pid, before.pid);
  assert.is(out.revision, String(Number(before.revision) + 1));
  const lines = (await audit(ctx)).filter((l) => l.key === 'dummy' && l.action === 'update');
  assert.equal(
    lines.map((l) => [l.status, l.result]),
    [[200, 'accepted']],
  );
});

test('control :: --timeout bounds the wait: exit 1 saying what it waited for', async (ctx) => {
  // A frozen server cannot leave, so the restart cannot finish inside the timeout however fast the host is. A
  // loaded host may see the server go (and come back) between its status and the signal: then freeze the next one.
  const pid = await waitFor(
    'a running demo server to freeze',
    async () => {
      const s = await running(ctx);
      try {
        process.kill(s.pid as number, 'SIGSTOP');
        return s.pid;
      } catch {
        return undefined;
      }
    },
    60_000,
  );
  try {
    const r = await cli(ctx, ['restart', 'demo', '--wait', '--timeout', '0.2']);
    assert.is(r.code, 1, r.stdout);
    assert.match(r.stderr, /timed out after .* waiting for the restart of demo/);
  } finally {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // The daemon went on with the restart and killed the frozen server meanwhile (slowly, on a busy host).
    }
  }
  await running(ctx);
});

test.run();
