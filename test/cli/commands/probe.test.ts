import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runMain } from '../../_support/cli.ts';
import { tempDir } from '../../_support/env.ts';
import {
  type EngineServer,
  INFO_ACZ,
  INFO_EXTERNAL,
  STATUS_IN_ROUND,
  STATUS_LOBBY,
  startEngineServer,
} from '../../fixtures/engine/payloads.ts';

/**
 * `watchdog probe <address>` against a loopback node:http server whose /status and /info answer (200, JSON) but
 * fail validation: exit 1, and every problem printed with its path.
 */
interface Ctx {
  server?: Server;
  port: number;
  cwd: string;
  cleanup: () => Promise<void>;
}
const test = suite<Ctx>('watchdog probe :: a server that answers but is invalid', {
  port: 0,
  cwd: '',
  cleanup: async () => {},
});

/** /status without a name; /info with a link whose url is ftp://x. */
const BODIES: Record<string, unknown> = {
  '/status': { players: 3 },
  '/info': { auth: { mode: 'Optional', public_key: '' }, build: null, links: [{ name: 'D', url: 'ftp://x' }] },
};

test.before(async (ctx) => {
  const t = await tempDir('wd-cli-probe-');
  ctx.cwd = t.path;
  ctx.cleanup = t.cleanup;
  ctx.server = createServer((req, res) => {
    const body = BODIES[req.url ?? ''];
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => ctx.server!.listen(0, '127.0.0.1', resolve));
  ctx.port = (ctx.server.address() as AddressInfo).port;
});
test.after(async (ctx) => {
  await new Promise<void>((r) => {
    ctx.server?.closeAllConnections();
    ctx.server?.close(() => r());
  });
  await ctx.cleanup();
});

test('probe :: exit 1; the problems listed with their paths', async ({ port, cwd }) => {
  const r = await runMain(['probe', `127.0.0.1:${port}`], { cwd });
  assert.is(r.code, 1, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.is(r.stderr, '');
  assert.match(r.stdout, new RegExp(`^status url: +http://127\\.0\\.0\\.1:${port}/status$`, 'm'));
  const problems = r.stdout.split('\n\n').at(-1)!;
  assert.match(problems, /^2 problems:\n {2}status\.name: .+\n {2}info\.links\.0\.url: .+\n$/);
  assert.not.match(r.stdout, 'no problems');
});

test('probe :: --json: exit 1, the same problems by path', async ({ port, cwd }) => {
  const r = await runMain(['probe', `127.0.0.1:${port}`, '--json'], { cwd });
  assert.is(r.code, 1, r.stderr);
  const json = JSON.parse(r.stdout) as { problems: Array<{ path: string; message: string }> };
  assert.equal(
    json.problems.map((p) => p.path),
    ['status.name', 'info.links.0.url'],
  );
  for (const p of json.problems) assert.ok(p.message.length > 0, `a message for ${p.path}`);
});

test.run();

// ---

/** `watchdog probe` against what a real engine serves: valid, exit 0. */
interface EngineCtx {
  engine?: EngineServer;
  cwd: string;
  cleanup: () => Promise<void>;
}
const engine = suite<EngineCtx>('watchdog probe :: a real engine server', { cwd: '', cleanup: async () => {} });

engine.before(async (ctx) => {
  const t = await tempDir('wd-cli-probe-engine-');
  ctx.cwd = t.path;
  ctx.cleanup = t.cleanup;
  ctx.engine = await startEngineServer({ status: STATUS_IN_ROUND, info: INFO_EXTERNAL });
});
engine.after(async (ctx) => {
  await ctx.engine?.close();
  await ctx.cleanup();
});

engine('probe :: in a round with links (launcher icons, a null icon): exit 0, no problems', async (ctx) => {
  Object.assign(ctx.engine!.bodies, { status: STATUS_IN_ROUND, info: INFO_EXTERNAL });
  const r = await runMain(['probe', `127.0.0.1:${ctx.engine!.port}`], { cwd: ctx.cwd });
  assert.is(r.code, 0, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.match(r.stdout, /^link: +Source \[github\] https:\/\/github\.com\/space-wizards\/space-station-14$/m);
  assert.match(r.stdout, /^link: +Rules https:\/\/example\.net\/rules$/m);
  assert.match(r.stdout, /valid: no problems found\n$/);
});

engine(
  'probe :: --json, hybrid ACZ build without links in the lobby: exit 0, the payloads as received',
  async (ctx) => {
    Object.assign(ctx.engine!.bodies, { status: STATUS_LOBBY, info: INFO_ACZ });
    const r = await runMain(['probe', `127.0.0.1:${ctx.engine!.port}`, '--json'], { cwd: ctx.cwd });
    assert.is(r.code, 0, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
    const json = JSON.parse(r.stdout) as {
      problems: unknown[];
      info: Record<string, unknown>;
      status: Record<string, unknown>;
    };
    assert.equal(json.problems, []);
    assert.equal(json.info, JSON.parse(INFO_ACZ));
    assert.equal(json.status, JSON.parse(STATUS_LOBBY));
  },
);

engine.run();
