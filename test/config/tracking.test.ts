import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, writeFiles } from './_support/files.ts';

const test = tempSuite('config :: process tracking keys', { prefix: 'wd-config-' });

test('tracking :: defaults: Auto, and 5 s to kill what a launch left', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance() });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) return assert.unreachable(r.problems.join('\n'));
  assert.is(r.config.settings.Process.Tracking, 'Auto');
  assert.is(r.config.timing.StragglerKillSeconds, 5);
});

test('tracking :: Environment by file or by variable; fractions of seconds', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      [],
      ['Process:', '  Tracking: Environment', 'Timing:', '  StragglerKillSeconds: 0.5'],
    ),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) return assert.unreachable(r.problems.join('\n'));
  assert.is(r.config.settings.Process.Tracking, 'Environment');
  assert.is(r.config.timing.StragglerKillSeconds, 0.5);
  await writeFiles(dir, { 'appsettings.yml': oneInstance() });
  const v = await loadConfig({ cwd: dir, env: { Process__Tracking: 'Environment' } });
  assert.is(v.ok && v.config.settings.Process.Tracking, 'Environment');
});

test('tracking :: a bad value names the key and the choices', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance([], ['Process:', '  Tracking: Cgroup', 'Timing:', '  StragglerKillSeconds: -1']),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  const problems = r.ok ? '' : r.problems.join('\n');
  assert.match(problems, /Process\.Tracking: expected Auto or Environment/);
  assert.match(problems, /Timing\.StragglerKillSeconds/);
});

test.run();
