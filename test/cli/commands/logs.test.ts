import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { logPath, rotateLogs } from '../../../src/process/log-file.ts';
import { runMain, spawnCli } from '../../_support/cli.ts';
import { testConfig } from '../../_support/config.ts';
import { tempDir, waitFor } from '../../_support/env.ts';

interface Ctx {
  cwd: string;
  logDir: string;
  cleanup: () => Promise<void>;
}
const test = suite<Ctx>('watchdog logs :: server.log of an instance from the local config', {
  cwd: '',
  logDir: '',
  cleanup: async () => {},
});

test.before.each(async (ctx) => {
  const t = await tempDir('wd-cli-logs-');
  ctx.cwd = t.path;
  ctx.cleanup = t.cleanup;
  ctx.logDir = join(t.path, 'instances', 'demo', 'logs');
  writeFileSync(
    join(t.path, 'appsettings.yml'),
    testConfig({
      instances: [
        { key: 'demo', port: 4101 },
        { key: 'other', port: 4102 },
      ],
    }),
  );
});
test.after.each((ctx) => ctx.cleanup());

const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);

test('logs :: -n N prints the last N lines; the default is 50', async ({ cwd, logDir }) => {
  mkdirSync(logDir, { recursive: true });
  writeFileSync(logPath(logDir), lines(1, 80).join('\n') + '\n');
  const three = await runMain(['logs', 'demo', '-n', '3'], { cwd });
  assert.is(three.code, 0, three.stderr);
  assert.is(three.stdout, 'line 78\nline 79\nline 80\n');
  const all = await runMain(['logs', 'demo'], { cwd });
  assert.is(all.stdout, lines(31, 80).join('\n') + '\n');
  const long = await runMain(['logs', 'demo', '--lines', '1'], { cwd });
  assert.is(long.stdout, 'line 80\n');
});

test('logs :: --config points at a config elsewhere', async ({ cwd, logDir }) => {
  mkdirSync(logDir, { recursive: true });
  writeFileSync(logPath(logDir), 'hello\n');
  const sub = join(cwd, 'elsewhere');
  mkdirSync(sub);
  const r = await runMain(['logs', 'demo', '--config', join(cwd, 'appsettings.yml')], { cwd: sub });
  // Instance folders resolve against the working directory, as the daemon's do.
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stderr, /no log yet at .*elsewhere\/instances\/demo\/logs\/server\.log/);
  const here = await runMain(['logs', 'demo', '--config', 'appsettings.yml'], { cwd });
  assert.is(here.stdout, 'hello\n');
});

test('logs :: an instance the config does not name: exit 1, listing the ones it does', async ({ cwd }) => {
  const r = await runMain(['logs', 'nope'], { cwd });
  assert.is(r.code, 1);
  assert.is(r.stderr, 'watchdog logs: no instance "nope" (instances: demo, other)\n');
});

test('logs :: no config: exit 2, naming the file looked for', async ({ cwd }) => {
  const empty = join(cwd, 'empty');
  mkdirSync(empty);
  const r = await runMain(['logs', 'demo'], { cwd: empty });
  assert.is(r.code, 2);
  assert.match(r.stderr, /watchdog logs needs the local config/);
});

test('logs :: -f prints the tail, then new lines across a rotation, until SIGINT (exit 0)', async ({ cwd, logDir }) => {
  mkdirSync(logDir, { recursive: true });
  writeFileSync(logPath(logDir), lines(1, 10).join('\n') + '\n');
  const cli = spawnCli(['logs', 'demo', '-f', '-n', '2'], { cwd });
  try {
    await waitFor('the tail', () => cli.stdout().includes('line 10\n'));
    appendFileSync(logPath(logDir), 'appended 1\n');
    await waitFor('an appended line', () => cli.stdout().includes('appended 1\n'));
    rotateLogs(logPath(logDir), 5);
    writeFileSync(logPath(logDir), 'after rotation\n');
    await waitFor('the line after rotation', () => cli.stdout().includes('after rotation\n'));
  } finally {
    cli.proc.kill('SIGINT');
  }
  const r = await cli.exited;
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, 'line 9\nline 10\nappended 1\nafter rotation\n');
});

test.run();
