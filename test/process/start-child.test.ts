import { spawn } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { execError } from '../../src/process/start-child.ts';
import { tempSuite } from '../_support/env.ts';

/**
 * A launch in a cgroup goes through /bin/sh, which would not fail the way spawn() does; execError must report what a
 * direct spawn reports, for each kind of bad RunCommand: compared here with a real spawn of the same file.
 */
const test = tempSuite('process :: exec check (what spawn would say)', { prefix: 'wd-exec-' });

/** The error code a direct spawn of `file` gives, or null when it starts. */
function spawnCode(file: string): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(file, [], { stdio: 'ignore' });
    child.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    child.once('spawn', () => {
      child.kill('SIGKILL');
      resolve(null);
    });
  });
}

test('exec-check :: every kind of RunCommand gets the code a direct spawn gets', async ({ dir }) => {
  const files: Record<string, { mode: number; text?: string; folder?: boolean }> = {
    'script.sh': { mode: 0o755, text: '#!/bin/sh\nexit 0\n' },
    'not-executable.sh': { mode: 0o644, text: '#!/bin/sh\nexit 0\n' },
    'no-shebang': { mode: 0o755, text: 'echo hi\n' },
    folder: { mode: 0o755, folder: true },
  };
  for (const [name, f] of Object.entries(files)) {
    const path = join(dir, name);
    if (f.folder) await mkdir(path);
    else await writeFile(path, f.text ?? '');
    await chmod(path, f.mode);
  }
  const cases = [...Object.keys(files).map((n) => join(dir, n)), join(dir, 'missing'), '/bin/true'];
  const seen: string[] = [];
  for (const file of cases) {
    const expected = await spawnCode(file);
    const ours = (await execError(file))?.code ?? null;
    assert.is(ours, expected, file);
    seen.push(String(expected));
  }
  // The cases cover a start, and each refusal spawn() makes.
  assert.equal([...new Set(seen)].sort(), ['EACCES', 'ENOENT', 'null']);
});

test.run();
