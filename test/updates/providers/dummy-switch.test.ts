import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, readlink, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as assert from 'uvu/assert';
import { ROOT } from '../../_support/env.ts';
import { type InstanceCtx, instanceSuite } from '../_support/instance-suite.ts';

/**
 * The do-it-yourself two-directory scheme (docs/diy-updates.md): the real scripts of docs/switch/, run
 * in a temp instance folder, against a loopback HTTP server standing in for the watchdog. A `curl` wrapper first on
 * PATH records curl's arguments, to prove the token never appears there.
 */

const run = promisify(execFile);
const SCRIPTS = join(ROOT, 'docs/switch');
const TOKEN = 'tok"with\\odd:chars';

interface Seen {
  method: string | undefined;
  url: string | undefined;
  auth: string | undefined;
}

interface Loopback {
  server: Server;
  port: number;
  seen: Seen[];
  status: number;
  env: NodeJS.ProcessEnv;
}

type Ctx = InstanceCtx & Loopback;

async function serverScript(path: string, says: string): Promise<void> {
  await writeFile(path, `#!/bin/sh\necho ${says}\n`);
  await chmod(path, 0o755);
}

async function runSwitch(
  ctx: Ctx,
  env: NodeJS.ProcessEnv = ctx.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(join(ctx.inst, 'switch'), [], { env, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

const active = async (ctx: Ctx) => (await run(join(ctx.inst, 'currentServer'), [])).stdout.trim();

// setup.sh makes the instance folder itself.
const sw = instanceSuite('dummy-switch', {
  prefix: 'wd-switch-',
  instance: 'none',
  ctx: {} as Loopback,
  before: prepare,
  after: (ctx) => new Promise<void>((resolve) => ctx.server.close(() => resolve())),
});

/** The loopback watchdog, curl wrapped, and the scheme set up with a server script in each directory. */
async function prepare(ctx: Ctx): Promise<void> {
  ctx.seen = [];
  ctx.status = 200;
  ctx.server = createServer((req: IncomingMessage, res) => {
    ctx.seen.push({ method: req.method, url: req.url, auth: req.headers.authorization });
    req.resume();
    res.writeHead(ctx.status, { 'Content-Type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => ctx.server.listen(0, '127.0.0.1', resolve));
  ctx.port = (ctx.server.address() as AddressInfo).port;

  // curl, wrapped: records its arguments, then runs the real one.
  const wrapDir = join(ctx.dir, 'wrap');
  await mkdir(wrapDir);
  const realCurl = (await run('sh', ['-c', 'command -v curl'])).stdout.trim();
  await writeFile(
    join(wrapDir, 'curl'),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> "${join(ctx.dir, 'curl-argv.log')}"\nexec "${realCurl}" "$@"\n`,
  );
  await chmod(join(wrapDir, 'curl'), 0o755);
  ctx.env = {
    ...process.env,
    PATH: `${wrapDir}:${process.env.PATH ?? ''}`,
    WATCHDOG_URL: `http://127.0.0.1:${ctx.port}/`,
    WATCHDOG_KEY: 'alpha',
    WATCHDOG_TOKEN: TOKEN,
  };

  await run('sh', [join(SCRIPTS, 'setup.sh'), ctx.inst]);
  await serverScript(join(ctx.inst, 'serverA', 'Robust.Server'), 'A');
  await serverScript(join(ctx.inst, 'serverB', 'Robust.Server'), 'B');
}

sw('dummy-switch :: setup makes serverA active, serverB inactive, switch pointing at B', async (ctx) => {
  assert.is(await readlink(join(ctx.inst, 'currentServer')), 'serverA/Robust.Server');
  assert.is(await readlink(join(ctx.inst, 'inactiveBin')), 'serverB');
  assert.is(await readlink(join(ctx.inst, 'switch')), 'switch-to-b.sh');
  assert.is(await active(ctx), 'A');
  assert.not.match(await readFile(join(ctx.inst, 'switch.conf'), 'utf8'), /tok/);
  // Running setup again leaves a working scheme alone.
  await run('sh', [join(SCRIPTS, 'setup.sh'), ctx.inst]);
  assert.is(await readlink(join(ctx.inst, 'currentServer')), 'serverA/Robust.Server');
});

sw('dummy-switch :: switch flips to the other directory and asks the watchdog for an update', async (ctx) => {
  const first = await runSwitch(ctx);
  assert.is(first.code, 0, first.stderr);
  assert.is(
    await realpath(join(ctx.inst, 'currentServer')),
    await realpath(join(ctx.inst, 'serverB', 'Robust.Server')),
  );
  assert.is(await active(ctx), 'B');
  assert.is(await realpath(join(ctx.inst, 'inactiveBin')), await realpath(join(ctx.inst, 'serverA')));
  assert.is(await readlink(join(ctx.inst, 'switch')), 'switch-to-a.sh');
  assert.equal(ctx.seen, [
    {
      method: 'POST',
      url: '/instances/alpha/update',
      auth: `Basic ${Buffer.from(`alpha:${TOKEN}`).toString('base64')}`,
    },
  ]);

  const second = await runSwitch(ctx);
  assert.is(second.code, 0, second.stderr);
  assert.is(await active(ctx), 'A');
  assert.is(await readlink(join(ctx.inst, 'inactiveBin')), 'serverB');
  assert.is(ctx.seen.length, 2);

  const argv = await readFile(join(ctx.dir, 'curl-argv.log'), 'utf8');
  assert.match(argv, /instances\/alpha\/update/);
  assert.not.match(argv, /tok/, "the token never reaches curl's arguments");
});

sw('dummy-switch :: an empty inactive directory or missing settings change nothing', async (ctx) => {
  await rm(join(ctx.inst, 'serverB', 'Robust.Server'));
  const empty = await runSwitch(ctx);
  assert.is(empty.code, 1);
  assert.match(empty.stderr, /unpack the new server into inactiveBin/);
  assert.is(await active(ctx), 'A');
  assert.is(await readlink(join(ctx.inst, 'switch')), 'switch-to-b.sh');

  await serverScript(join(ctx.inst, 'serverB', 'Robust.Server'), 'B');
  const noToken = await runSwitch(ctx, { ...ctx.env, WATCHDOG_TOKEN: '' });
  assert.is(noToken.code, 1);
  assert.match(noToken.stderr, /WATCHDOG_TOKEN/);
  assert.is(await active(ctx), 'A');
  assert.is(ctx.seen.length, 0);

  // The token may come from a file instead.
  await writeFile(join(ctx.dir, 'token'), `${TOKEN}\n`);
  const fromFile = await runSwitch(ctx, {
    ...ctx.env,
    WATCHDOG_TOKEN: '',
    WATCHDOG_TOKEN_FILE: join(ctx.dir, 'token'),
  });
  assert.is(fromFile.code, 0, fromFile.stderr);
  assert.is(ctx.seen[0]?.auth, `Basic ${Buffer.from(`alpha:${TOKEN}`).toString('base64')}`);
});

sw('dummy-switch :: a refused update request fails the script and says the links were switched', async (ctx) => {
  ctx.status = 401;
  const refused = await runSwitch(ctx);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /links were switched, but telling the watchdog .* failed/);
  assert.is(await active(ctx), 'B');
  assert.is(ctx.seen.length, 1);
});

sw.run();
