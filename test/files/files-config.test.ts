/** `Servers.Instances.<key>.Files` through the real config loader: the default, a setting, and bad folders. */
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, writeFiles } from '../config/_support/files.ts';

const test = tempSuite('files :: config', { prefix: 'wd-files-config-' });

test('files config :: absent: replays, logs and dumps (not the snapshots); set: exactly those folders', async ({
  dir,
}) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance() });
  const byDefault = await loadConfig({ cwd: dir, env: {} });
  if (!byDefault.ok) throw new Error(byDefault.problems.join('\n'));
  assert.equal(byDefault.config.settings.Servers.Instances.alpha?.Files?.Folders, ['data/replays', 'logs', 'dumps']);
  await writeFiles(dir, { 'appsettings.yml': oneInstance(['Files:', '  Folders: [logs, data/replays/big]']) });
  const set = await loadConfig({ cwd: dir, env: {} });
  if (!set.ok) throw new Error(set.problems.join('\n'));
  assert.equal(set.config.settings.Servers.Instances.alpha?.Files?.Folders, ['logs', 'data/replays/big']);
});

test('files config :: a folder that climbs out, is absolute or hidden is an error at its key path', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance(['Files:', "  Folders: ['../other', /var/log, .ssh]"]) });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.not.ok(r.ok);
  const problems = r.ok ? [] : r.problems;
  assert.is(problems.length, 3, problems.join('\n'));
  for (const [i, what] of [
    [0, /empty, "\." or "\.\." segment/],
    [1, /relative to the instance folder/],
    [2, /hidden/],
  ] as const)
    assert.ok(
      problems.some((p) => p.includes(`Servers.Instances.alpha.Files.Folders[${i}]: `) && what.test(p)),
      problems.join('\n'),
    );
});

test.run();
