import * as assert from 'uvu/assert';
import { startDaemon } from '../_support/daemon.ts';
import { freePort, waitFor } from '../_support/env.ts';
import { crash, pidsWith } from '../e2e/resilience/_support.ts';
import {
  ENGINE_CHECKIN_SECONDS,
  type EngineInstance,
  engineSuite,
  engineYaml,
  gone,
  prepareEngine,
  running,
  serverLog,
  TOKEN,
  unpackedEngine,
} from './_engine.ts';

/**
 * `PersistServers: true` with the real engine: a daemon killed outright (SIGKILL) leaves the engine running, the
 * next daemon in the same folder adopts it (same pid, no second launch) and the engine's next check-in, up to 15 s
 * later, reaches the new daemon. The daemon listens on a fixed port: the engine checks in to the address it was
 * launched with.
 */

interface Ctx {
  engine: EngineInstance;
  urlsPort: number;
  yaml: string;
  pid: number;
  /** When the second daemon was listening (ms). */
  adoptedAt: number;
}

const test = engineSuite<Ctx>('engine :: PersistServers adoption of the real engine', {
  ctx: {} as Ctx,
  config: async (ctx) => {
    const program = (await unpackedEngine()).program;
    ctx.engine = await prepareEngine(ctx.dir, 'keep');
    ctx.urlsPort = await freePort();
    ctx.yaml = engineYaml([{ engine: ctx.engine, runCommand: program }], { urlsPort: ctx.urlsPort, persist: true });
    return ctx.yaml;
  },
});

test('the engine runs and checks in under the first daemon', async (ctx) => {
  const s = await running(ctx.daemon!, 'keep');
  ctx.pid = s.pid!;
  ctx.pids.add(ctx.pid);
  assert.ok(s.lastCheckinAt, 'checked in');
});

test('daemon SIGKILL: the engine keeps running; the next daemon adopts it (same pid, no second launch)', async (ctx) => {
  await crash(ctx.daemon!);
  assert.not.ok(gone(ctx.pid), 'the engine outlived its daemon');
  ctx.daemon = await startDaemon(ctx.yaml, { dir: ctx.dir });
  ctx.adoptedAt = Date.now();
  const s = await running(ctx.daemon, 'keep');
  assert.is(s.pid, ctx.pid, 'the same engine');
  assert.equal(await pidsWith(`${ctx.dir}/instances/keep/config.toml`), [ctx.pid], 'one engine, not two');
  assert.not.match(ctx.daemon.log(), /server launched/, 'the new daemon launched nothing');
});

test(`its next check-in (every ${ENGINE_CHECKIN_SECONDS} s) reaches the new daemon and is accepted`, async (ctx) => {
  const d = ctx.daemon!;
  const s = await waitFor(
    'a check-in after the adoption',
    async () => {
      const now = await d.status('keep', TOKEN);
      return now.lastCheckinAt && Date.parse(now.lastCheckinAt) >= ctx.adoptedAt ? now : undefined;
    },
    (ENGINE_CHECKIN_SECONDS + 15) * 1000,
    200,
  );
  assert.is(s.pid, ctx.pid);
  assert.is(s.state, 'running');
  assert.not.match(d.log(), /check-in rejected/);
  assert.not.match(await serverLog(ctx.dir, 'keep'), /Failed to send ping to watchdog/);
});

test('daemon SIGTERM with PersistServers: the engine is left running for the next daemon', async (ctx) => {
  assert.is(await ctx.daemon!.stop(30_000), 0);
  assert.not.ok(gone(ctx.pid), 'the engine still runs (the suite kills it afterwards)');
  assert.not.match(await serverLog(ctx.dir, 'keep'), /shutting down\.\.\./);
});

test.run();
