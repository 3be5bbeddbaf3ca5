/**
 * The CLI against a daemon that is still starting: it answers 503 (nothing done, Retry-After: 1) until its instances
 * are registered. A read asks again each second, a bounded number of times; a control request is not sent twice.
 * A strict loopback stand-in for the daemon counts what it is asked and answers 503 to the first `busy` requests.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { runMain, standIn } from '../../_support/cli.ts';
import { basic } from '../../_support/daemon.ts';

interface Ctx {
  url: string;
  cwd: string;
  /** How many more requests get 503. */
  busy: number;
  requests: string[];
  close: () => Promise<void>;
}
const test = suite<Ctx>('watchdog CLI :: a daemon still starting', {
  url: '',
  cwd: '',
  busy: 0,
  requests: [],
  close: async () => {},
});

const STILL_STARTING = 'the daemon is still registering its instances; retry in a moment';
const ROWS = [
  { key: 'demo', state: 'server.running' },
  { key: 'beta', state: 'stopped.idle' },
];

test.before(async (ctx) => {
  const daemon = await standIn((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    ctx.requests.push(`${req.method} ${path}`);
    const admin = req.headers.authorization === basic('boss', 'pw');
    const token = req.headers.authorization === basic('demo', 'tok');
    const answer = (status: number, body?: unknown, headers: Record<string, string> = {}) =>
      res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(body === undefined ? '' : JSON.stringify(body));
    if (ctx.busy > 0) {
      ctx.busy--;
      return answer(503, { error: STILL_STARTING }, { 'retry-after': '1' });
    }
    if (req.method === 'GET' && path === '/api/instances' && admin) return answer(200, ROWS);
    if (req.method === 'GET' && path === '/instances/demo/status' && token) return answer(200, ROWS[0]);
    if (req.method === 'POST' && path === '/instances/demo/restart' && token) return answer(200);
    answer(404, { error: 'not here' });
  }, 'wd-cli-starting-');
  Object.assign(ctx, daemon);
});
test.after((ctx) => ctx.close());
test.before.each((ctx) => {
  ctx.requests = [];
});

const cli = (ctx: Ctx, args: string[], env: Record<string, string>) =>
  runMain(args, { cwd: ctx.cwd, env: { WATCHDOG_URL: ctx.url, ...env } });

test('starting-daemon :: status waits out two 503s and prints every instance', async (ctx) => {
  ctx.busy = 2;
  const r = await cli(ctx, ['status'], { WATCHDOG_ADMIN: 'boss:pw' });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /\ndemo +server\.running/);
  assert.match(r.stdout, /\nbeta +stopped\.idle/);
  assert.equal(ctx.requests, ['GET /api/instances', 'GET /api/instances', 'GET /api/instances']);
});

test("starting-daemon :: an instance's status waits too; a restart answered 503 is not sent again", async (ctx) => {
  ctx.busy = 1;
  const status = await cli(ctx, ['status', 'demo', '--json'], { WATCHDOG_TOKEN: 'tok' });
  assert.is(status.code, 0, status.stderr);
  assert.is((JSON.parse(status.stdout) as { key: string }).key, 'demo');
  ctx.busy = 1;
  const restart = await cli(ctx, ['restart', 'demo'], { WATCHDOG_TOKEN: 'tok' });
  assert.is(restart.code, 1);
  assert.match(restart.stderr, /503: .*still registering its instances/);
  assert.equal(ctx.requests, [
    'GET /instances/demo/status',
    'GET /instances/demo/status',
    'POST /instances/demo/restart',
  ]);
});

test('starting-daemon :: a daemon that stays at 503 is given up on after ten retries, with its reason', async (ctx) => {
  ctx.busy = 100;
  const r = await cli(ctx, ['status'], { WATCHDOG_ADMIN: 'boss:pw' });
  assert.is(r.code, 1);
  assert.match(r.stderr, /503: .*still registering its instances; retry in a moment/);
  assert.is(ctx.requests.length, 11);
  ctx.busy = 0;
});

test.run();
