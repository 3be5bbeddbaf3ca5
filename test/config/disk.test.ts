import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, writeFiles } from './_support/files.ts';

const test = tempSuite('config :: Disk and the update space limits', { prefix: 'wd-disk-config-' });

test('disk :: defaults when nothing is set', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance() });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  assert.equal(r.config.settings.Disk, { LowFreeMegabytes: 1000, LowFreePercent: 5, CheckSeconds: 30 });
  const u = r.config.settings.Servers.Instances.alpha?.Updates;
  assert.equal([u?.SpaceMarginMegabytes, u?.MaxUnpackedMegabytes], [64, 20_000]);
});

test('disk :: every bad value at once, with its key path', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      ['Updates:', '  SpaceMarginMegabytes: -1', '  MaxUnpackedMegabytes: 0'],
      ['Disk:', '  LowFreeMegabytes: 0', '  LowFreePercent: 150', '  CheckSeconds: 7200', '  Every: 5'],
    ),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.not.ok(r.ok);
  const at = (path: string) => `appsettings.yml: ${path}: `;
  assert.equal(
    [...(r.ok ? [] : r.problems)].sort(),
    [
      `${at('Disk.LowFreeMegabytes')}expected a positive number of megabytes, got 0`,
      `${at('Disk.LowFreePercent')}expected a percentage of at most 100, got 150`,
      `${at('Disk.CheckSeconds')}expected at most 3600 seconds: a disk can fill up in less than an hour, got 7200`,
      `${at('Disk.Every')}unknown key (expected one of LowFreeMegabytes, LowFreePercent, CheckSeconds)`,
      `${at('Servers.Instances.alpha.Updates.SpaceMarginMegabytes')}expected zero or more megabytes, got -1`,
      `${at('Servers.Instances.alpha.Updates.MaxUnpackedMegabytes')}expected a positive number of megabytes, got 0`,
    ].sort(),
  );
});

test.run();
