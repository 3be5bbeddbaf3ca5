/**
 * A counterexample of the configuration fuzz suite (config.test.ts), kept as a plain test: a secret file that is
 * not a regular file hung the loader.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { type LoadResult, loadConfig } from '../../src/config/load.ts';
import { tempSuite, within } from '../_support/env.ts';
import { oneInstance, writeFiles } from '../config/_support/files.ts';

const A = 'appsettings.yml: Servers.Instances.alpha';

const regressions = tempSuite('fuzz/config secret files', { prefix: 'wd-fuzz-config-' });

const load = (dir: string): Promise<LoadResult> => within(3_000, 'loadConfig', loadConfig({ cwd: dir, env: {} }));

// A FIFO named as ApiTokenFile (or Admin.PasswordFile): opening it blocked until a writer came, so the loader and
// `watchdog check` hung for good, and the blocked thread kept even process.exit() from finishing.
regressions('config :: a token or password file that is not a regular file is refused at once', async ({ dir }) => {
  execFileSync('mkfifo', [join(dir, 'token.fifo')]);
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      ['ApiTokenFile: token.fifo'],
      ['Admin:', '  Username: a', '  PasswordFile: /dev/zero'],
    ),
  });
  const r = await load(dir);
  assert.equal(r, {
    ok: false,
    problems: [
      'appsettings.yml: Admin.PasswordFile: expected a readable file holding the password (/dev/zero is not a regular file), got "/dev/zero"',
      `${A}.ApiTokenFile: expected a readable file holding the token (${join(dir, 'token.fifo')} is not a regular file), got "token.fifo"`,
    ],
  });
});

regressions.run();
