/** `Maintenance.Announcements` and `Maintenance.Commands` through the real config loader. */
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, writeFiles } from './_support/files.ts';

const test = tempSuite('config :: scheduled console commands', { prefix: 'wd-sched-cmd-' });

const MAINTENANCE = [
  'Maintenance:',
  "  RestartSchedule: '0 6 * * *'",
  '  Announcements: [{ MinutesBefore: 5, Command: "say Restart in 5 minutes" }]',
  '  Commands: [{ Schedule: \'*/30 * * * *\', Command: "say Visit our forum" }]',
];

test('scheduled commands config :: taken with the console on', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance(['Console: true', ...MAINTENANCE]) });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  const m = r.config.settings.Servers.Instances.alpha?.Maintenance;
  assert.equal(m?.Announcements, [{ MinutesBefore: 5, Command: 'say Restart in 5 minutes' }]);
  assert.equal(m?.Commands, [{ Schedule: '*/30 * * * *', Command: 'say Visit our forum' }]);
});

test('scheduled commands config :: refused without the console, with a control character, or a bad schedule', async ({
  dir,
}) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance(MAINTENANCE) });
  const off = await loadConfig({ cwd: dir, env: {} });
  assert.not.ok(off.ok);
  const offProblems = off.ok ? [] : off.problems;
  for (const at of ['Announcements[0].Command', 'Commands[0].Command'])
    assert.ok(
      offProblems.some((p) => p.includes(`Servers.Instances.alpha.Maintenance.${at}: `) && /Console: true/.test(p)),
      offProblems.join('\n'),
    );
  await writeFiles(dir, {
    'appsettings.yml': oneInstance([
      'Console: true',
      'Maintenance:',
      '  Commands: [{ Schedule: "every day", Command: "say a\\u0007b" }]',
    ]),
  });
  const bad = await loadConfig({ cwd: dir, env: {} });
  const problems = bad.ok ? [] : bad.problems;
  assert.ok(
    problems.some((p) => p.includes('Maintenance.Commands[0].Command: ') && /control character/.test(p)),
    problems.join('\n'),
  );
  assert.ok(
    problems.some((p) => p.includes('Maintenance.Commands[0].Schedule')),
    problems.join('\n'),
  );
});

test.run();
