import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT, tempDir } from '../_support/env.ts';
import { oneInstance, writeFiles } from './files.ts';

/** `bin/watchdog check …` as a real process, from `cwd`. */
function check(args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/watchdog'), 'check', ...args],
      {
        cwd,
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, WATCHDOG_ENV: '' },
      },
      (err, stdout, stderr) => {
        const code = err && typeof err.code === 'number' ? err.code : err ? null : 0;
        resolve({ status: code, stdout, stderr });
      },
    );
  });
}

const cli = suite('cli/check :: the real command');

cli('check :: a bad config exits 2, one line per problem, and creates no folder', async () => {
  const t = await tempDir('wd-check-');
  try {
    await writeFiles(t.path, {
      'bad.yml': [
        'BaseUrl: nope',
        'Servers:',
        '  InstanceRoot: instances',
        '  Instances:',
        '    alpha:',
        '      ApiPort: 70000',
        '      TimeoutSeconds: -1',
        '      UpdateType: Jenkins',
      ],
    });
    const r = await check(['--config', 'bad.yml'], t.path);
    assert.is(r.status, 2, r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines, [
      'bad.yml: BaseUrl: expected an http(s) URL such as http://localhost:5000/, got "nope"',
      'bad.yml: Servers.Instances.alpha.ApiPort: expected an integer 1-65535, got 70000',
      'bad.yml: Servers.Instances.alpha.TimeoutSeconds: expected a positive number of seconds, got -1',
      'bad.yml: Servers.Instances.alpha.Updates.BaseUrl: expected the Jenkins URL because UpdateType is Jenkins, got nothing',
      'bad.yml: Servers.Instances.alpha.Updates.JobName: expected the Jenkins job name because UpdateType is Jenkins, got nothing',
    ]);
    assert.is(r.stdout, '');
    assert.equal(await readdir(t.path), ['bad.yml'], 'nothing created');
  } finally {
    await t.cleanup();
  }
});

cli('check :: a good config exits 0 with a summary, still touching nothing', async () => {
  const t = await tempDir('wd-check-');
  try {
    await writeFiles(t.path, {
      'appsettings.yml': oneInstance(
        ['Name: Alpha one', 'ApiToken: t', 'UpdateType: Dummy', 'TimeoutSeconds: 30', 'RunCommand: /opt/game/run'],
        ['Urls: http://*:0'],
      ),
    });
    const r = await check([], t.path);
    assert.is(r.status, 0, r.stderr);
    for (const part of [
      'files:     appsettings.yml',
      'listen:    http://*:0 (all interfaces)',
      'alpha ("Alpha one")',
      'update type: Dummy',
      'api port:    1212',
      'timeout:     30 s',
      'program:     /opt/game/run',
    ]) {
      assert.ok(r.stdout.includes(part), `summary shows "${part}":\n${r.stdout}`);
    }
    assert.equal(await readdir(t.path), ['appsettings.yml'], 'nothing created');
  } finally {
    await t.cleanup();
  }
});

cli('check :: without appsettings.yml exits 2 naming the folder; a bad option is a usage error', async () => {
  const t = await tempDir('wd-check-');
  try {
    const [missing, usage] = await Promise.all([check([], t.path), check(['--frobnicate'], t.path)]);
    assert.is(missing.status, 2);
    assert.ok(missing.stderr.includes(t.path), missing.stderr);
    assert.is(usage.status, 2);
    assert.match(usage.stderr, /frobnicate/);
    assert.equal(await readdir(t.path), []);
  } finally {
    await t.cleanup();
  }
});

cli.run();
