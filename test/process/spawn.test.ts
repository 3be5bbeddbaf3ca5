import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { ProcessError } from '../../src/errors.ts';
import type { LaunchSpec } from '../../src/process/launch-spec.ts';
import { isAlive, readCmdline } from '../../src/process/proc-info.ts';
import { spawnServer } from '../../src/process/spawn.ts';
import { tempSuite, waitFor } from '../_support/env.ts';
import {
  FIXTURES,
  instanceFor,
  killAll,
  launchFixture,
  readLog,
  recorder,
  specFor,
} from '../_support/fixture-servers.ts';

// Zombie-aware: killed grandchildren are reparented to init and may linger as zombies until it reaps them.
const alive = isAlive;

const launch = tempSuite('spawn', { prefix: 'wd-spawn-', after: () => killAll() });

launch(
  'spawn :: the server receives the exact argv, cwd and env; the secret is not in /proc/<pid>/cmdline',
  async (ctx) => {
    const hook = await recorder();
    try {
      const echo = join(ctx.dir, 'echo.json');
      const { proc, spec, secret } = await launchFixture(ctx.dir, 'echo-env.mjs', {
        env: { ECHO_FILE: echo, CUSTOM: 'yes' },
        baseUrl: hook.url,
      });
      const seen = await waitFor(
        'echo file',
        async () =>
          JSON.parse(await readFile(echo, 'utf8')) as { argv: string[]; cwd: string; env: Record<string, string> },
      );
      assert.equal(seen.argv, spec.args);
      assert.is(seen.cwd, ctx.dir);
      assert.is(seen.env.ROBUST_CVAR_watchdog__token, secret);
      assert.is(seen.env.CUSTOM, 'yes');
      assert.is(seen.env.PATH, process.env.PATH);
      const cmdline = await readCmdline(proc.pid);
      assert.ok(cmdline && cmdline.length > spec.args.length);
      assert.not.ok(
        cmdline?.some((a) => a.includes(secret)),
        'secret absent from argv',
      );
      assert.match(proc.startTime ?? '', /^\d+@/);
      // The fixture checks in like the engine: Basic key:secret to <baseUrl>server_api/<key>/ping.
      const ping = await waitFor('a check-in', () => hook.requests.find((r) => r.url === '/server_api/alpha/ping'));
      assert.is(ping.method, 'POST');
      assert.is(ping.headers.authorization, `Basic ${Buffer.from(`alpha:${secret}`).toString('base64')}`);
      proc.kill();
      const exit = await proc.exited;
      assert.is(exit.signal, 'SIGKILL');
    } finally {
      await hook.close();
    }
  },
);

launch('spawn :: kill takes the whole process group, grandchildren included', async (ctx) => {
  const pidsFile = join(ctx.dir, 'pids.json');
  const { proc } = await launchFixture(ctx.dir, 'forker.mjs', { env: { PIDS_FILE: pidsFile } });
  const pids = await waitFor('grandchild pids', async () => JSON.parse(await readFile(pidsFile, 'utf8')) as number[]);
  assert.is(pids.length, 2);
  assert.ok(pids.every(alive), 'grandchildren running');
  proc.kill();
  await proc.exited;
  await waitFor('grandchildren gone', () => pids.every((p) => !alive(p)));
});

launch('spawn :: a server that exits on its own takes its leftover children with it', async (ctx) => {
  const pidsFile = join(ctx.dir, 'pids.json');
  const { proc, port, secret } = await launchFixture(ctx.dir, 'forker.mjs', { env: { PIDS_FILE: pidsFile } });
  const pids = await waitFor('grandchild pids', async () => JSON.parse(await readFile(pidsFile, 'utf8')) as number[]);
  await waitFor(
    'api up',
    async () =>
      (
        await fetch(`http://127.0.0.1:${port}/update`, { method: 'POST', headers: { WatchdogToken: secret } }).catch(
          () => null,
        )
      )?.ok,
  );
  assert.equal(await proc.exited, { code: 0, signal: null });
  await waitFor('grandchildren gone', () => pids.every((p) => !alive(p)));
});

launch('spawn :: output lines reach server.log and onLine, tagged by stream, exit status reported', async (ctx) => {
  const { proc, lines } = await launchFixture(ctx.dir, 'exit-at-once.sh', { env: { EXIT_CODE: '3' } });
  assert.equal(await proc.exited, { code: 3, signal: null });
  assert.ok(lines.some((l) => l.stream === 'stdout' && l.line === 'exit-at-once: starting'));
  assert.ok(lines.some((l) => l.stream === 'stderr' && l.line === 'exit-at-once: giving up'));
  const log = await readLog(ctx.dir);
  assert.match(log, /watchdog: launching .*exit-at-once\.sh/);
  assert.match(log, /^exit-at-once: starting$/m);
  assert.match(log, /^exit-at-once: giving up$/m);
  await waitFor("the run's end in server.log", async () =>
    /watchdog: server \(pid \d+\) exited with code 3 ---$/m.test(await readLog(ctx.dir)),
  );
});

launch("spawn :: each run's end is one line of server.log with its code or signal, also with persist", async (ctx) => {
  for (const persist of [false, true]) {
    const { proc } = await launchFixture(ctx.dir, 'echo-env.mjs', { spawn: { persist } });
    proc.kill('SIGKILL');
    assert.equal((await proc.exited).signal, 'SIGKILL');
    await waitFor(
      `the kill in server.log (persist ${persist})`,
      async () =>
        (await readLog(ctx.dir))
          .split('\n')
          .filter((l) => /watchdog: server \(pid \d+\) killed by signal SIGKILL ---$/.test(l)).length ===
        (persist ? 2 : 1),
    );
  }
});

launch('spawn :: server.log is rotated and bounded (keep files of maxBytes)', async (ctx) => {
  const { proc, lines } = await launchFixture(ctx.dir, 'echo-env.mjs', {
    env: { TICK_MS: '1' },
    spawn: { rotation: { maxBytes: 2000, keep: 3 } },
  });
  await waitFor(
    'two rotations',
    async () => (await readdir(join(ctx.dir, 'logs'))).includes('server.log.2') && lines.length > 400,
  );
  proc.kill();
  await proc.exited;
  const files = (await readdir(join(ctx.dir, 'logs'))).sort();
  assert.equal(files, ['server.log', 'server.log.1', 'server.log.2']);
  for (const f of files) assert.ok((await stat(join(ctx.dir, 'logs', f))).size <= 2000, `${f} within bound`);
  const newest = await readLog(ctx.dir);
  const last = lines.filter((l) => l.line.startsWith('tick')).at(-1)?.line ?? '';
  assert.ok(newest.includes(last), 'the newest lines are in server.log');
});

/** The ProcessError that spawnServer rejects `spec` with (logs in `dir`/logs); fails the test if it launches. */
async function launchError(dir: string, spec: LaunchSpec, persist = false): Promise<ProcessError> {
  try {
    await spawnServer(spec, { logDir: join(dir, 'logs'), persist });
  } catch (err) {
    assert.instance(err, ProcessError);
    return err as ProcessError;
  }
  assert.unreachable('should reject');
  throw new Error('unreachable');
}

launch('spawn :: a missing program rejects with ProcessError naming it (ENOENT)', async (ctx) => {
  const program = join(ctx.dir, 'bin', 'Robust.Server');
  const err = await launchError(ctx.dir, specFor(instanceFor(ctx.dir, program)));
  assert.match(err.message, `cannot launch ${program}: ENOENT (file not found) — check RunCommand`);
  assert.is((err.cause as NodeJS.ErrnoException).code, 'ENOENT');
  assert.match(await readLog(ctx.dir), /cannot launch/);
});

launch(
  'spawn :: a program without execute permission rejects with ProcessError (EACCES), also with persist',
  async (ctx) => {
    const program = join(ctx.dir, 'server.sh');
    await writeFile(program, '#!/bin/sh\nexit 0\n');
    await chmod(program, 0o644);
    const spec = specFor(instanceFor(ctx.dir, program));
    for (const persist of [false, true]) {
      assert.match((await launchError(ctx.dir, spec, persist)).message, /cannot launch .*server\.sh: EACCES/);
    }
  },
);

launch('spawn :: a missing instance folder is reported as such, not as a missing program', async (ctx) => {
  const dir = join(ctx.dir, 'nope');
  const err = await launchError(ctx.dir, specFor(instanceFor(dir, join(FIXTURES, 'echo-env.mjs'))));
  assert.match(err.message, /working directory .*nope does not exist/);
});

launch.run();
