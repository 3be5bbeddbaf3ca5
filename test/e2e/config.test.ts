import { spawnSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT, tempDir } from '../_support/env.ts';

const test = suite('e2e :: bad configuration');

test('watchdog start with a bad config exits 2, lists every problem, touches nothing', async () => {
  const tmp = await tempDir('wd-e2e-');
  try {
    await writeFile(join(tmp.path, 'appsettings.yml'), [
      'Urls: http://localhost:5000',
      'BaseUrl: not a url',
      'Servers:',
      '  Instances:',
      '    alpha:',
      '      ApiPort: abc',
      '      TimeoutSeconds: -5',
      '      UpdateType: Jenkins',
      '',
    ].join('\n'));
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/watchdog'), 'start'], { cwd: tmp.path, encoding: 'utf8', timeout: 20_000 });
    assert.is(r.status, 2, r.stderr);
    for (const path of ['BaseUrl', 'Servers.Instances.alpha.ApiPort', 'Servers.Instances.alpha.TimeoutSeconds', 'Servers.Instances.alpha.UpdateType']) {
      assert.ok(r.stderr.includes(path), `names ${path}: ${r.stderr}`);
    }
    assert.equal(await readdir(tmp.path), ['appsettings.yml'], 'no folder created');
  } finally {
    await tmp.cleanup();
  }
});

test('a missing appsettings.yml exits 2 naming the folder', async () => {
  const tmp = await tempDir('wd-e2e-');
  try {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/watchdog')], { cwd: tmp.path, encoding: 'utf8', timeout: 20_000 });
    assert.is(r.status, 2);
    assert.ok(r.stderr.includes(tmp.path), r.stderr);
  } finally {
    await tmp.cleanup();
  }
});

test.run();
