import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { UpdatesSchema } from '../../../src/config/schema.ts';
import { findArtifact, planBuild } from '../../../src/updates/git/build.ts';
import { globFiles } from '../../../src/updates/git/glob.ts';
import { tempSuite } from '../../_support/env.ts';
import { rejects } from '../_support/instance-suite.ts';

const updates = (extra: Record<string, unknown> = {}) => v.parse(UpdatesSchema, extra);

// ---

const plan = tempSuite('git-build');

plan('git-build :: a repository with Content.Packaging is built with the engine packaging commands', async (ctx) => {
  await mkdir(join(ctx.dir, 'Content.Packaging'));
  const hybrid = await planBuild(ctx.dir, updates({ BuildCommand: 'ignored' }), 'linux-x64');
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

  const split = await planBuild(ctx.dir, updates({ HybridACZ: false }), 'osx-arm64');
  assert.equal(
    split.steps.slice(2).map((s) => [s.program, ...s.args].join(' ')),
    [
      'dotnet run --project Content.Packaging server --platform osx-arm64',
      'dotnet run --project Content.Packaging client --no-wipe-release',
    ],
  );
  assert.is(split.clientPattern, 'release/*Client*.zip');
});

plan('git-build :: without Content.Packaging, the python packaging scripts are run with python3', async (ctx) => {
  await mkdir(join(ctx.dir, 'Tools'));
  await writeFile(join(ctx.dir, 'Tools', 'package_server_build.py'), '');
  const hybrid = await planBuild(ctx.dir, updates({ BuildCommand: 'ignored' }), 'linux-x64');
  assert.is(hybrid.kind, 'python');
  assert.equal(
    hybrid.steps.map((s) => [s.program, ...s.args].join(' ')),
    ['python3 Tools/package_server_build.py --hybrid-acz -p linux-x64'],
  );
  assert.is(hybrid.serverPattern, 'release/*linux-x64*.zip');
  assert.is(hybrid.env.PYTHONUNBUFFERED, '1');
  await rejects(
    planBuild(ctx.dir, updates({ HybridACZ: false }), 'linux-x64'),
    /no Tools\/package_client_build\.py, which a build with HybridACZ false needs/,
  );
  await writeFile(join(ctx.dir, 'Tools', 'package_client_build.py'), '');
  const split = await planBuild(ctx.dir, updates({ HybridACZ: false }), 'osx-arm64');
  assert.equal(
    split.steps.map((s) => [s.program, ...s.args].join(' ')),
    ['python3 Tools/package_server_build.py -p osx-arm64', 'python3 Tools/package_client_build.py'],
  );
  assert.is(split.clientPattern, 'release/*Client*.zip');

  // Content.Packaging is the newer way and wins, as in the real watchdog.
  await mkdir(join(ctx.dir, 'Content.Packaging'));
  assert.is((await planBuild(ctx.dir, updates(), 'linux-x64')).kind, 'packaging');
});

plan('git-build :: otherwise BuildCommand runs with sh -c, told the platform and hybrid mode', async (ctx) => {
  const p = await planBuild(
    ctx.dir,
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
  await rejects(
    planBuild(ctx.dir, updates(), 'linux-x64'),
    /Content\.Packaging.*package_server_build\.py.*BuildCommand/,
  );
});

// ---

const glob = tempSuite('git-glob');

glob('git-glob :: * and ? within a segment, any case, files only, sorted', async (ctx) => {
  await mkdir(join(ctx.dir, 'release', 'sub.zip'), { recursive: true });
  for (const f of [
    'SS14.Server_linux-x64.zip',
    'SS14.Server_linux-musl-x64.zip',
    'SS14.Client.zip',
    'a_linux-x64.zip.sha256',
  ]) {
    await writeFile(join(ctx.dir, 'release', f), f);
  }
  const names = async (pattern: string) => (await globFiles(ctx.dir, pattern)).map((p) => p.slice(ctx.dir.length + 1));
  assert.equal(await names('release/*linux-x64*.zip'), ['release/SS14.Server_linux-x64.zip']);
  assert.equal(await names('release/*client*.zip'), ['release/SS14.Client.zip']);
  assert.equal(await names('./release/SS14.?erver_linux-*.zip'), [
    'release/SS14.Server_linux-musl-x64.zip',
    'release/SS14.Server_linux-x64.zip',
  ]);
  assert.equal(await names('*/SS14.Client.zip'), ['release/SS14.Client.zip']);
  assert.equal(await names('missing/*.zip'), []);
  for (const bad of ['/etc/*', '../*.zip', 'release/../../x']) {
    await rejects(
      globFiles(ctx.dir, bad, 'Updates.Artifact'),
      /Updates\.Artifact .* relative path inside the repository/,
    );
  }
  await rejects(
    findArtifact(ctx.dir, 'release/SS14.Server_*.zip', 'Updates.Artifact'),
    /several files .*SS14\.Server_linux-musl-x64\.zip, SS14\.Server_linux-x64\.zip/,
  );
});

plan.run();
glob.run();
