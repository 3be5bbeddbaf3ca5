import * as assert from 'uvu/assert';
import { runCli } from '../_support/cli.ts';
import { startDaemon } from '../_support/daemon.ts';
import { freePort } from '../_support/env.ts';
import { engineConfig, engineSuite, running, serverLog, TOKEN } from './_support/engine.ts';

/**
 * The server console with the real engine: it reads console commands from its standard input (the console FIFO),
 * so `watchdog console <key> cvar game.hostname` prints the engine's answer; and after a daemon restart with
 * PersistServers, the adopted engine still reads the same FIFO.
 */

const HOSTNAME = 'Console Engine 27';

interface Ctx {
  yaml: string;
  pid: number;
}

const test = engineSuite<Ctx>('engine :: the server console of the real engine', {
  ctx: {} as Ctx,
  config: async (ctx) => {
    const con = { key: 'con', args: ['--cvar', `game.hostname=${HOSTNAME}`], more: { Console: true } };
    const { yaml } = await engineConfig(ctx.dir, [con], { urlsPort: await freePort(), persist: true });
    ctx.yaml = yaml;
    return yaml;
  },
});

/** `watchdog console con cvar game.hostname`: exit 0 and the engine's answer among the lines printed. */
async function askHostname(ctx: { dir: string; daemon?: { url: string } }) {
  const r = await runCli(['console', 'con', 'cvar', 'game.hostname', '--url', ctx.daemon!.url, '--token', TOKEN], {
    cwd: ctx.dir,
    timeoutMs: 30_000,
  });
  assert.is(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    HOSTNAME,
    `the engine's answer; printed:\n${r.stdout}\nserver.log:\n${await serverLog(ctx.dir, 'con')}`,
  );
}

test('console :: watchdog console cvar game.hostname prints the engine answer', async (ctx) => {
  const s = await running(ctx.daemon!, 'con');
  ctx.pid = s.pid!;
  ctx.pids.add(ctx.pid);
  await askHostname(ctx);
});

test('console :: after a daemon restart with PersistServers the adopted engine still answers', async (ctx) => {
  assert.is(await ctx.daemon!.stop(30_000), 0);
  ctx.daemon = await startDaemon(ctx.yaml, { dir: ctx.dir });
  const s = await running(ctx.daemon, 'con');
  assert.is(s.pid, ctx.pid, 'the same engine, adopted');
  await askHostname(ctx);
});

test.run();
