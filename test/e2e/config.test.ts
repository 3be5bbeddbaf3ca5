import { spawn, spawnSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT, tempDir } from '../_support/env.ts';

const test = suite('e2e :: bad configuration');

test('config :: watchdog start with a bad config exits 2, lists every problem, touches nothing', async () => {
  const tmp = await tempDir('wd-e2e-');
  try {
    await writeFile(
      join(tmp.path, 'appsettings.yml'),
      [
        'Urls: http://localhost:5000',
        'BaseUrl: not a url',
        'Servers:',
        '  Instances:',
        '    alpha:',
        '      ApiPort: abc',
        '      TimeoutSeconds: -5',
        '      UpdateType: Jenkinz',
        '',
      ].join('\n'),
    );
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/watchdog'), 'start'], {
      cwd: tmp.path,
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.is(r.status, 2, r.stderr);
    for (const path of [
      'BaseUrl',
      'Servers.Instances.alpha.ApiPort',
      'Servers.Instances.alpha.TimeoutSeconds',
      'Servers.Instances.alpha.UpdateType',
    ]) {
      assert.ok(r.stderr.includes(path), `names ${path}: ${r.stderr}`);
    }
    assert.equal(await readdir(tmp.path), ['appsettings.yml'], 'no folder created');
  } finally {
    await tmp.cleanup();
  }
});

test('config :: a missing appsettings.yml exits 2 naming the folder', async () => {
  const tmp = await tempDir('wd-e2e-');
  try {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/watchdog')], {
      cwd: tmp.path,
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.is(r.status, 2);
    assert.ok(r.stderr.includes(tmp.path), r.stderr);
  } finally {
    await tmp.cleanup();
  }
});

/** Runs the daemon with no instances until `until` matches its output, then SIGTERMs it. */
async function runUntil(dir: string, args: string[], until: RegExp): Promise<{ out: string; code: number | null }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/watchdog'), 'start', ...args], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const seen = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no line matching ${until} within 15 s:\n${out}`)), 15_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (until.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await seen;
  } finally {
    child.kill('SIGTERM');
  }
  return { out, code: await exited };
}

test('config :: --log-level wins over Serilog.MinimumLevel both ways; --log-format json writes one JSON object a line', async () => {
  const tmp = await tempDir('wd-e2e-');
  try {
    const config = (level: string) =>
      [
        'Urls: http://127.0.0.1:0',
        'BaseUrl: http://127.0.0.1:9/', // nothing listens there: the start-up check warns
        `Serilog: { MinimumLevel: { Default: ${level} } }`,
        'Servers: { Instances: {} }',
        '',
      ].join('\n');
    await writeFile(join(tmp.path, 'appsettings.yml'), config('Debug'));
    const quiet = await runUntil(
      tmp.path,
      ['--log-level', 'warn', '--log-format', 'json'],
      /does not reach this watchdog/,
    );
    assert.is(quiet.code, 0);
    const records = quiet.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: string; msg: string });
    assert.ok(records.length > 0);
    assert.equal([...new Set(records.map((r) => r.level))], ['warn'], 'nothing below warn, though the file says Debug');
    await writeFile(join(tmp.path, 'appsettings.yml'), config('Warning'));
    // SIGTERM right after "listening on", while the daemon is still starting: held, then a clean exit 0.
    const chatty = await runUntil(tmp.path, ['--log-level', 'debug'], /listening on/);
    assert.is(chatty.code, 0);
    assert.match(
      chatty.out,
      /INFO {2}\[watchdog\] listening on http:\/\/127\.0\.0\.1:\d+/,
      'readable form, info shown though the file says Warning',
    );
  } finally {
    await tmp.cleanup();
  }
});

test.run();
