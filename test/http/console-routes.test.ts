import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConsoleError } from '../../src/process/console-fifo.ts';
import { basic, fromLoopback, harness, memoryInstance, memoryRegistry, send } from './_support/app.ts';

const TOKEN = 'tok-console-0123456789';

/** Instances whose console records commands (`on`), says no server reads it, fails oddly, or is off. */
function setup() {
  const sent: string[] = [];
  const on = Object.assign(memoryInstance('on', { apiToken: TOKEN }), {
    consoleSettings: () => ({ commandsPerMinute: 2 }),
    sendConsole: async (command: string) => void sent.push(command),
  });
  const idle = Object.assign(memoryInstance('idle', { apiToken: TOKEN }), {
    consoleSettings: () => ({ commandsPerMinute: 30 }),
    sendConsole: async () => {
      throw new ConsoleError('not-reading', 'the server has no console open');
    },
  });
  const broken = Object.assign(memoryInstance('broken', { apiToken: TOKEN }), {
    consoleSettings: () => ({ commandsPerMinute: 30 }),
    sendConsole: async () => {
      throw new Error('EACCES on the FIFO');
    },
  });
  const off = Object.assign(memoryInstance('off', { apiToken: TOKEN }), { consoleSettings: () => null });
  const h = harness(memoryRegistry(on, idle, broken, off));
  return { ...h, sent };
}

const json = (command: unknown) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ command }),
});
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

const test = suite('console routes');

test('console routes :: sent: 200 {sent: true}, the command reaches the instance and is audited with who sent it', async () => {
  const t = setup();
  const res = await send(t.app, 'POST', '/instances/on/console', basic('on', TOKEN), json('cvar game.hostname'));
  assert.is(res.status, 200);
  assert.equal(await res.json(), { sent: true });
  assert.equal(t.sent, ['cvar game.hostname']);
  assert.is(t.controls.length, 1);
  assert.is(t.controls[0]?.action, 'console');
  assert.is(t.controls[0]?.command, 'cvar game.hostname');
  assert.is(t.controls[0]?.user, 'on');
  assert.is(t.controls[0]?.result, 'accepted');
  assert.not.ok(
    t.log.lines.some((l) => l.includes('game.hostname')),
    "the daemon's log never holds the command",
  );
});

test('console routes :: refusals say why, send nothing, and are audited with the command', async () => {
  const t = setup();
  const cases: [string, RequestInit, number, string][] = [
    ['/instances/off/console', json('status'), 403, 'the console is off for instance off'],
    ['/instances/on/console', json('say hi\nquit'), 400, 'newline'],
    ['/instances/on/console', json(''), 400, 'empty'],
    ['/instances/on/console', json(42), 400, 'expected a JSON body'],
    ['/instances/on/console', { headers: { 'content-type': 'application/json' }, body: '{' }, 400, 'expected a JSON'],
    ['/instances/idle/console', json('status'), 409, 'no console open'],
    ['/instances/broken/console', json('status'), 500, 'EACCES on the FIFO'],
  ];
  for (const [path, init, status, reason] of cases) {
    const key = path.split('/')[2] ?? '';
    const res = await send(t.app, 'POST', path, basic(key, TOKEN), init);
    assert.is(res.status, status, `${path} ${String(init.body)}`);
    assert.match(await errorOf(res), reason);
  }
  assert.equal(t.sent, []);
  assert.equal(
    t.controls.map((c) => [c.key, c.status, c.result]),
    cases.map(([path, , status]) => [path.split('/')[2], status, 'refused']),
  );
  assert.is(t.controls[1]?.command, 'say hi\nquit', 'the refused command is in the audit');
});

test('console routes :: the credentials come first; a body over 4 KiB is 413; GET is 405', async () => {
  const t = setup();
  assert.is((await send(t.app, 'POST', '/instances/on/console', basic('on', 'wrong'), json('x'))).status, 401);
  assert.is((await send(t.app, 'POST', '/instances/on/console', undefined, json('x'))).status, 401);
  const big = await send(t.app, 'POST', '/instances/on/console', basic('on', TOKEN), json('x'.repeat(5000)));
  assert.is(big.status, 413);
  assert.is((await send(t.app, 'GET', '/instances/on/console', basic('on', TOKEN))).status, 405);
  assert.equal(t.sent, []);
});

test('console routes :: CommandsPerMinute per caller: 429 past it', async () => {
  const t = setup();
  for (const c of ['a', 'b'])
    assert.is((await send(t.app, 'POST', '/instances/on/console', basic('on', TOKEN), json(c))).status, 200);
  const over = await send(t.app, 'POST', '/instances/on/console', basic('on', TOKEN), json('c'));
  assert.is(over.status, 429);
  assert.match(await errorOf(over), 'more than 2 console commands a minute');
  assert.equal(t.sent, ['a', 'b']);
});

test('console routes :: the dashboard route: the header, then answered as the token route', async () => {
  const t = setup();
  const app = fromLoopback(t.app);
  const bare = await send(app, 'POST', '/api/instances/on/console', undefined, json('x'));
  assert.is(bare.status, 403);
  const headers = { 'content-type': 'application/json', 'x-watchdog-dashboard': '1' };
  const ok = await send(app, 'POST', '/api/instances/on/console', undefined, {
    headers,
    body: JSON.stringify({ command: 'from the dashboard' }),
  });
  assert.is(ok.status, 200);
  const off = await send(app, 'POST', '/api/instances/off/console', undefined, {
    headers,
    body: JSON.stringify({ command: 'x' }),
  });
  assert.is(off.status, 403);
  assert.equal(t.sent, ['from the dashboard']);
});

test.run();
