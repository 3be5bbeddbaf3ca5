import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { freePort, ROOT, tempDir } from '../../_support/env.ts';

const test = suite('e2e :: faults: an instance root that cannot be made');

// Under /proc Node's recursive mkdir spins forever (src/make-dir.ts); a daemon whose instance folder cannot be made
// also used to keep listening after it said so, deaf to SIGTERM. spawnSync's timeout turns either into a failure.
for (const [what, root] of [
  ['under /proc', `/proc/watchdog-no-such-${process.pid}/instances`],
  ['under a regular file', 'a-file/instances'],
] as const) {
  test(`instance-root :: ${what}: exits 1 and says which folder and why`, async () => {
    const tmp = await tempDir('wd-instance-root-');
    try {
      await writeFile(join(tmp.path, 'a-file'), 'not a folder');
      const yaml = testConfig({ instances: [{ key: 'demo', port: await freePort() }] }).replace(
        'Servers:\n',
        `Servers:\n  InstanceRoot: ${root}\n`,
      );
      await writeFile(join(tmp.path, 'appsettings.yml'), yaml);
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/watchdog'), 'start'], {
        cwd: tmp.path,
        encoding: 'utf8',
        timeout: 20_000,
        killSignal: 'SIGKILL', // the old daemon ignored SIGTERM here
      });
      assert.is(r.status, 1, `status ${r.status} (${r.signal ?? 'no signal'}):\n${r.stdout}\n${r.stderr}`);
      assert.match(
        r.stderr,
        `could not create the instance folder ${root.startsWith('/') ? root : join(tmp.path, root)}/demo`,
      );
      assert.match(r.stdout + r.stderr, 'shutting down (the instances could not start)');
    } finally {
      await tmp.cleanup();
    }
  });
}

test.run();
