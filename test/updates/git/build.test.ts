import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdatesSchema } from '../../../src/config/schema.ts';
import { UpdateError } from '../../../src/errors.ts';
import { findArtifact, planBuild } from '../../../src/updates/git/build.ts';
import { globFiles } from '../../../src/updates/git/glob.ts';
import { tempDir } from '../../_support/env.ts';

const updates = (extra: Record<string, unknown> = {}) => v.parse(UpdatesSchema, extra);

// ---

const plan = suite('git-build');

plan('git-build :: a repository with Content.Packaging is built with the engine packaging commands', async () => {
  const tmp = await tempDir();
  try {
    await mkdir(join(tmp.path, 'Content.Packaging'));
    const hybrid = await planBuild(tmp.path, updates({ BuildCommand: 'ignored' }), 'linux-x64');
    assert.is(hybrid.kind, 'packaging');
    assert.equal(
      hybrid.steps.map((s) => [s.program, ...s.args].join(' ')),
      [
        'dotnet restore',
        'dotnet build Content.Packaging --configuration Release --no-restore /m',
        'dotnet run --project Content.Packaging server --platform linux-x64 --hybrid-acz',
      ],
    );
    assert.is(hybrid.clientPattern, null);
    assert.is(hybrid.serverPattern, 'release/*linux-x64*.zip');
    assert.is(hybrid.env.MSBUILDDISABLENODEREUSE, '1');

    const split = await planBuild(tmp.path, updates({ HybridACZ: false }), 'osx-arm64');
    assert.equal(
      split.steps.slice(2).map((s) => [s.program, ...s.args].join(' ')),
      [
        'dotnet run --project Content.Packaging server --platform osx-arm64',
        'dotnet run --project Content.Packaging client --no-wipe-release',
      ],
    );
    assert.is(split.clientPattern, 'release/*Client*.zip');
  } finally {
    await tmp.cleanup();
  }
});

plan('git-build :: without Content.Packaging, the python packaging scripts are run with python3', async () => {
  const tmp = await tempDir();
  try {
    await mkdir(join(tmp.path, 'Tools'));
    await writeFile(join(tmp.path, 'Tools', 'package_server_build.py'), '');
    const hybrid = await planBuild(tmp.path, updates({ BuildCommand: 'ignored' }), 'linux-x64');
    assert.is(hybrid.kind, 'python');
    assert.equal(
      hybrid.steps.map((s) => [s.program, ...s.args].join(' ')),
      ['python3 Tools/package_server_build.py --hybrid-acz -p linux-x64'],
    );
    assert.is(hybrid.serverPattern, 'release/*linux-x64*.zip');
    assert.is(hybrid.env.PYTHONUNBUFFERED, '1');
    try {
      await planBuild(tmp.path, updates({ HybridACZ: false }), 'linux-x64');
      assert.unreachable();
    } catch (err) {
      assert.instance(err, UpdateError);
      assert.match(
        (err as Error).message,
        /no Tools\/package_client_build\.py, which a build with HybridACZ false needs/,
      );
    }
    await writeFile(join(tmp.path, 'Tools', 'package_client_build.py'), '');
    const split = await planBuild(tmp.path, updates({ HybridACZ: false }), 'osx-arm64');
    assert.equal(
      split.steps.map((s) => [s.program, ...s.args].join(' ')),
      ['python3 Tools/package_server_build.py -p osx-arm64', 'python3 Tools/package_client_build.py'],
    );
    assert.is(split.clientPattern, 'release/*Client*.zip');

    // Content.Packaging is the newer way and wins, as in the real watchdog.
    await mkdir(join(tmp.path, 'Content.Packaging'));
    assert.is((await planBuild(tmp.path, updates(), 'linux-x64')).kind, 'packaging');
  } finally {
    await tmp.cleanup();
  }
});

plan('git-build :: otherwise BuildCommand runs with sh -c, told the platform and hybrid mode', async () => {
  const tmp = await tempDir();
  try {
    const p = await planBuild(
      tmp.path,
      updates({
        BuildCommand: 'make server',
        Artifact: 'out/*.zip',
        HybridACZ: false,
        ClientArtifact: 'out/client/*.zip',
      }),
      'linux-arm64',
    );
    assert.equal(p.steps, [
      { what: 'the build command (Updates.BuildCommand)', program: 'sh', args: ['-c', 'make server'] },
    ]);
    assert.equal(p.env, { WATCHDOG_PLATFORM: 'linux-arm64', WATCHDOG_HYBRID_ACZ: 'false' });
    assert.is(p.serverPattern, 'out/*.zip');
    assert.is(p.clientPattern, 'out/client/*.zip');
    try {
      await planBuild(tmp.path, updates(), 'linux-x64');
      assert.unreachable();
    } catch (err) {
      assert.instance(err, UpdateError);
      assert.match((err as Error).message, /Content\.Packaging.*package_server_build\.py.*BuildCommand/);
    }
  } finally {
    await tmp.cleanup();
  }
});

// ---

const glob = suite('git-glob');

glob('git-glob :: * and ? within a segment, any case, files only, sorted', async () => {
  const tmp = await tempDir();
  try {
    await mkdir(join(tmp.path, 'release', 'sub.zip'), { recursive: true });
    for (const f of [
      'SS14.Server_linux-x64.zip',
      'SS14.Server_linux-musl-x64.zip',
      'SS14.Client.zip',
      'a_linux-x64.zip.sha256',
    ]) {
      await writeFile(join(tmp.path, 'release', f), f);
    }
    const names = async (pattern: string) =>
      (await globFiles(tmp.path, pattern)).map((p) => p.slice(tmp.path.length + 1));
    assert.equal(await names('release/*linux-x64*.zip'), ['release/SS14.Server_linux-x64.zip']);
    assert.equal(await names('release/*client*.zip'), ['release/SS14.Client.zip']);
    assert.equal(await names('./release/SS14.?erver_linux-*.zip'), [
      'release/SS14.Server_linux-musl-x64.zip',
      'release/SS14.Server_linux-x64.zip',
    ]);
    assert.equal(await names('*/SS14.Client.zip'), ['release/SS14.Client.zip']);
    assert.equal(await names('missing/*.zip'), []);
    for (const bad of ['/etc/*', '../*.zip', 'release/../../x']) {
      try {
        await globFiles(tmp.path, bad, 'Updates.Artifact');
        assert.unreachable(bad);
      } catch (err) {
        assert.instance(err, UpdateError);
        assert.match((err as Error).message, /Updates\.Artifact .* relative path inside the repository/);
      }
    }
    try {
      await findArtifact(tmp.path, 'release/SS14.Server_*.zip', 'Updates.Artifact');
      assert.unreachable();
    } catch (err) {
      assert.match(
        (err as Error).message,
        /several files .*SS14\.Server_linux-musl-x64\.zip, SS14\.Server_linux-x64\.zip/,
      );
    }
  } finally {
    await tmp.cleanup();
  }
});

plan.run();
glob.run();
