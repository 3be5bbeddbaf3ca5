/**
 * The console FIFO with real processes: a server spawned with it as its stdin reads each command as a line, never
 * sees end of input while no daemon holds the FIFO, and a fresh open (a next daemon) reaches the same server, in
 * both output modes; commands that are not one line of text are refused; a FIFO with no server is `not-reading`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CONSOLE_FIFO,
  ConsoleError,
  openConsoleForServer,
  sendConsoleCommand,
} from '../../src/process/console-fifo.ts';
import { type ServerProcess, spawnServer } from '../../src/process/spawn.ts';
import { waitFor } from '../_support/env.ts';
import { fixture } from '../_support/fixtures.ts';
import { killGroup } from '../_support/procs.ts';

interface Ctx {
  dir: string;
  proc: ServerProcess | null;
  lines: string[];
}
const test = suite<Ctx>('console', { dir: '', proc: null, lines: [] });

test.before.each(async (ctx) => {
  ctx.dir = await mkdtemp(join(tmpdir(), 'wd-console-'));
  ctx.lines = [];
  ctx.proc = null;
});
test.after.each(async (ctx) => {
  killGroup(ctx.proc?.pid);
  await ctx.proc?.exited;
  await rm(ctx.dir, { recursive: true, force: true });
});

const waitLine = async (ctx: Ctx, text: string) => {
  await waitFor(`"${text}"`, () => ctx.lines.includes(text), 10_000).catch((err: Error) => {
    assert.unreachable(`${err.message}; last lines: ${JSON.stringify(ctx.lines.slice(-5))}`);
  });
};

for (const persist of [false, true]) {
  test(`console :: commands reach the server as lines, and its input never ends (persist ${persist})`, async (ctx) => {
    const fifo = join(ctx.dir, CONSOLE_FIFO);
    ctx.proc = await spawnServer(
      {
        program: process.execPath,
        args: [fixture('console-echo.mjs')],
        cwd: ctx.dir,
        env: { ...process.env, FIXTURE_LIFETIME_MS: '60000' },
      },
      { logDir: join(ctx.dir, 'logs'), persist, followMs: 20, console: fifo, onLine: (_s, l) => ctx.lines.push(l) },
    );
    await waitLine(ctx, `fixture server up (key null, port null)`);
    await sendConsoleCommand(fifo, 'cvar game.hostname');
    await waitLine(ctx, 'console: cvar game.hostname');
    // Another sender, as the next daemon would be: the same FIFO, a fresh open.
    await sendConsoleCommand(fifo, 'echo ünïcode');
    await waitLine(ctx, 'console: echo ünïcode');
    // Nobody writes now. Had the input ended with that sender, the server's reader would be closed: a later
    // command would never be read, and `end of input` would stand before it.
    await sendConsoleCommand(fifo, 'status');
    await waitLine(ctx, 'console: status');
    assert.not.ok(ctx.lines.includes('console: end of input'), 'no end of input while nobody writes');
  });
}

test('console :: a command that is not one line of text is refused before it is sent', async (ctx) => {
  const fifo = join(ctx.dir, CONSOLE_FIFO);
  for (const bad of ['', 'say hi\nshutdown', 'a\u0007b', 'x'.repeat(2000)]) {
    const err = await sendConsoleCommand(fifo, bad).catch((e: unknown) => e);
    assert.instance(err, ConsoleError);
    assert.is((err as ConsoleError).reason, 'invalid', JSON.stringify(bad.slice(0, 20)));
  }
});

test('console :: with no server holding the FIFO the command is not-reading, never blocking', async (ctx) => {
  const fifo = join(ctx.dir, CONSOLE_FIFO);
  const missing = await sendConsoleCommand(fifo, 'status').catch((e: unknown) => e);
  assert.is((missing as ConsoleError).reason, 'not-reading');
  const { closeSync } = await import('node:fs');
  closeSync(await openConsoleForServer(fifo));
  const err = await sendConsoleCommand(fifo, 'status').catch((e: unknown) => e);
  assert.is((err as ConsoleError).reason, 'not-reading');
  assert.match((err as Error).message, /has no console open/);
});

test.run();
