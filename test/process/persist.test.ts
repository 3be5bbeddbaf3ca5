import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { generateSecret } from '../../src/process/launch-spec.ts';
import { isAlive } from '../../src/process/proc-info.ts';
import { type SpawnOptions, spawnServer } from '../../src/process/spawn.ts';
import { freePort, ROOT, tempSuite, waitFor } from '../_support/env.ts';
import { FIXTURES, instanceFor, killAll, readLog, specFor, track } from '../_support/fixture-servers.ts';

const persist = tempSuite('spawn persist', { prefix: 'wd-persist-', after: () => killAll() });

async function echoSpec(dir: string, env: Record<string, string> = {}) {
  const port = await freePort();
  const instance = instanceFor(dir, join(FIXTURES, 'echo-env.mjs'), {
    port,
    args: ['--cvar', `net.port=${port}`],
    env: { FIXTURE_LIFETIME_MS: '60000', ...env },
  });
  return specFor(instance, { baseUrl: 'http://127.0.0.1:9/', secret: generateSecret(), env: process.env });
}

persist(
  'spawn persist :: the server outlives the daemon that launched it and keeps logging to its file',
  async (ctx) => {
    const spec = await echoSpec(ctx.dir, { TICK_MS: '50' });
    const logDir = join(ctx.dir, 'logs');
    const parent = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'test/process/_support/persist-parent.ts'), JSON.stringify({ spec, logDir })],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    parent.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => {
        parent.kill('SIGKILL');
        resolve(-1);
      }, 15_000);
      parent.once('exit', (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    const report = JSON.parse(out.trim() || '{}') as { pid?: number; line?: string };
    if (report.pid) track(report.pid);
    assert.is(code, 0, 'the parent exits on its own after detach()');
    assert.ok(report.pid, 'the parent reported the server pid');
    const pid = report.pid ?? 0;
    assert.match(
      report.line ?? '',
      /^(fixture server up|tick \d+)/,
      'lines arrive through the log tail while attached',
    );
    // The parent, its pipes and its event loop are gone; the server must still be alive and writing.
    const size = (await stat(join(logDir, 'server.log'))).size;
    await waitFor(
      'log grows after the parent exited',
      async () => (await stat(join(logDir, 'server.log'))).size > size + 20,
    );
    assert.ok(isAlive(pid), 'server still running');
    process.kill(-pid, 'SIGKILL');
    await waitFor('server gone', () => !isAlive(pid));
  },
);

/** The echo fixture spawned with persist, its log in `dir`/logs; `lines` collects what the log tail reports. */
async function spawnPersisted(dir: string, env: Record<string, string>, opts: Partial<SpawnOptions>) {
  const lines: string[] = [];
  const proc = await spawnServer(await echoSpec(dir, env), {
    logDir: join(dir, 'logs'),
    persist: true,
    onLine: (_s, l) => lines.push(l),
    ...opts,
  });
  track(proc.pid);
  return { proc, lines };
}

persist(
  'spawn persist :: output goes to server.log (O_APPEND) and to onLine; exit and kill work while attached',
  async (ctx) => {
    const { proc, lines } = await spawnPersisted(ctx.dir, { TICK_MS: '20' }, { followMs: 30 });
    await waitFor('ticks through the tail', () => lines.filter((l) => l.startsWith('tick')).length >= 3);
    proc.kill();
    assert.equal(await proc.exited, { code: null, signal: 'SIGKILL' });
    const log = await readLog(ctx.dir);
    assert.match(log, /watchdog: launching/);
    for (const l of lines) assert.ok(log.includes(l), `line "${l}" is in the file`);
  },
);

persist('spawn persist :: copy-and-truncate keeps the file bounded while attached', async (ctx) => {
  const { proc, lines } = await spawnPersisted(
    ctx.dir,
    { TICK_MS: '1' },
    { followMs: 20, rotation: { maxBytes: 3000, keep: 2 } },
  );
  await waitFor(
    'a rotation',
    async () => (await stat(join(ctx.dir, 'logs', 'server.log.1')).catch(() => null)) !== null && lines.length > 600,
  );
  proc.kill();
  await proc.exited;
  // Polling lets the file overshoot by what one interval writes; it must stay far below unbounded growth.
  assert.ok((await stat(join(ctx.dir, 'logs', 'server.log'))).size < 3000 * 4);
  const ticks = lines.filter((l) => l.startsWith('tick')).map((l) => Number(l.slice(5)));
  assert.ok(ticks.length > 500);
  assert.ok(
    ticks.every((n, i) => i === 0 || n > (ticks[i - 1] ?? 0)),
    'lines arrive in order, none twice',
  );
});

persist.run();
