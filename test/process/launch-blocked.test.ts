/**
 * A launch that finds the daemon out of descriptors is a LaunchBlockedError (kind `resources`), not a ProcessError
 * blaming RunCommand: a real process under a real low limit (`prlimit`) exhausts its descriptors and spawns.
 */
import { spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LaunchBlockedError } from '../../src/errors.ts';
import { resourceBlock } from '../../src/process/start-child.ts';
import { ROOT, tempDir } from '../_support/env.ts';

const test = suite('process launch blocked');

const prlimit = spawnSync('prlimit', ['--version'], { encoding: 'utf8' }).status === 0;

test('launch-blocked :: the resource codes map to a block with an actionable message; others do not', () => {
  const err = (code: string) => Object.assign(new Error(`spawn ${code}`), { code });
  for (const [code, words] of [
    ['EMFILE', 'out of file descriptors (EMFILE)'],
    ['ENFILE', 'system is out of file descriptors (ENFILE)'],
    ['EAGAIN', 'EAGAIN'],
    ['ENOMEM', 'out of memory'],
  ] as const) {
    const b = resourceBlock(err(code));
    assert.ok(b instanceof LaunchBlockedError, code);
    assert.is(b?.kind, 'resources');
    assert.match(b?.message ?? '', words);
    assert.is((b?.cause as Error | undefined)?.message, `spawn ${code}`, 'the cause is kept');
  }
  // Wrapped once (an error whose cause has the code) is found too.
  assert.ok(resourceBlock(new Error('open failed', { cause: err('EMFILE') })));
  for (const code of ['ENOENT', 'EACCES', 'ENOSPC']) assert.is(resourceBlock(err(code)), null, code);
  assert.is(resourceBlock('EMFILE'), null);
  const port = new LaunchBlockedError('port', 'port 1212 held by pid 9 (x)');
  assert.is(resourceBlock(port), port, 'a block from elsewhere passes through');
});

for (const mode of ['piped', 'persist'] as const) {
  const name = `launch-blocked :: spawn out of descriptors (${mode}) is blocked, and launches once they are free`;
  if (!prlimit) {
    console.log(`skipped "${name}": prlimit (util-linux) is not installed`);
    test.skip(name, () => {});
    continue;
  }
  test(name, async () => {
    const tmp = await tempDir('wd-emfile-');
    try {
      const logDir = join(tmp.path, 'logs');
      await mkdir(logDir);
      const spec = { program: '/bin/true', args: [], cwd: tmp.path, env: { PATH: '/usr/bin:/bin' } };
      const r = spawnSync(
        'prlimit',
        [
          '--nofile=48:48',
          '--',
          process.execPath,
          '--import',
          'tsx',
          join(ROOT, 'test/process/_support/emfile-parent.ts'),
          JSON.stringify({ spec, logDir }),
          mode,
        ],
        // tsx writes its transform cache from its loader thread after the modules load: a write still open when
        // the helper starves itself closes its descriptor later and hands the attempts a free one. Without the
        // disk cache the loader touches no file once the helper runs.
        { cwd: ROOT, encoding: 'utf8', timeout: 20_000, env: { ...process.env, TSX_DISABLE_CACHE: '1' } },
      );
      assert.is(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as {
        starved: { ok: boolean; name?: string; kind?: string; message?: string };
        again: { ok: boolean; kind?: string };
        freed: { ok: boolean; code?: number };
        health: string[];
      };
      assert.equal(
        out.starved,
        {
          ok: false,
          name: 'LaunchBlockedError',
          kind: 'resources',
          message: 'the watchdog is out of file descriptors (EMFILE)',
        },
        r.stdout,
      );
      assert.equal(out.freed, { ok: true, code: 0 }, 'the same launch works once descriptors are free');
      assert.is(out.again.kind, 'resources', 'blocked twice');
      // Neither blocked attempt could open server.log: one outage for both, ended by the launch that wrote it.
      // The lines they lost: piped, each one's launch and error markers; persist, the error marker only (the
      // launch marker goes through the descriptor it could not open).
      const dropped = mode === 'piped' ? 4 : 2;
      assert.equal(out.health, ['failing EMFILE', `resumed ${dropped}`], r.stdout);
    } finally {
      await tmp.cleanup();
    }
  });
}

test.run();
