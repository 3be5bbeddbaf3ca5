import { spawnSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { freePort, ROOT, tempDir } from '../../_support/env.ts';

const test = suite("e2e :: faults: the daemon's port is taken");

test('port-taken :: exits 1 with the cause said once, having created no folder and launched nothing', async () => {
  const tmp = await tempDir('wd-port-taken-');
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const address = blocker.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  try {
    const yaml = testConfig({ instances: [{ key: 'demo', port: await freePort() }] }).replace(
      'Urls: http://127.0.0.1:0',
      `Urls: http://127.0.0.1:${port}`,
    );
    await writeFile(join(tmp.path, 'appsettings.yml'), yaml);
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/watchdog'), 'start'], {
      cwd: tmp.path,
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.is(r.status, 1, r.stderr);
    assert.match(r.stderr, `cannot listen on 127.0.0.1:${port}`);
    assert.is(r.stderr.split('EADDRINUSE').length - 1, 1, `EADDRINUSE said once:\n${r.stderr}`);
    assert.equal(await readdir(tmp.path), ['appsettings.yml'], 'no logs/ or instances/ folder');
  } finally {
    blocker.close();
    await tmp.cleanup();
  }
});

test.run();
