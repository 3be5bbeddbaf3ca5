import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { tempSuite } from '../_support/env.ts';
import { serversYaml, writeFiles } from './_support/files.ts';

const test = tempSuite('config :: Maintenance', { prefix: 'wd-maint-config-' });

test('maintenance :: a good section loads, with When and MaxDelayMinutes defaulted', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml({
      alpha: ['ApiPort: 1212', 'Maintenance:', '  RestartSchedule: "*/5 * * * * *"', '  TimeZone: Europe/Berlin'],
    }),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  const m = r.config.settings.Servers.Instances.alpha?.Maintenance;
  assert.equal(
    [m?.RestartSchedule, m?.TimeZone, m?.When, m?.MaxDelayMinutes],
    ['*/5 * * * * *', 'Europe/Berlin', 'RoundEnd', 120],
  );
});

test('maintenance :: every problem at once, each with its Servers.Instances.<key>.Maintenance.<Key> path', async ({
  dir,
}) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml({
      alpha: [
        'ApiPort: 1212',
        'Maintenance:',
        '  RestartSchedule: "61 6 * * *"',
        '  UpdateSchedule: "0 0 6 * * * *"',
        '  TimeZone: Mars/Olympus',
        '  When: Sometime',
        '  MaxDelayMinutes: -5',
      ],
      beta: ['ApiPort: 1213', 'Maintenance:', '  MaxDelayMinutes: 0', '  MaxDelay: 5'],
    }),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.not.ok(r.ok);
  const problems = r.ok ? [] : r.problems;
  const at = (key: string, field: string) => `appsettings.yml: Servers.Instances.${key}.Maintenance.${field}: `;
  const cron = 'expected a cron schedule of 5 fields, or 6 with seconds first, such as "0 6 * * *"';
  assert.equal(
    [...problems].sort(),
    [
      `${at('alpha', 'RestartSchedule')}${cron} (Invalid value for minute: 61), got "61 6 * * *"`,
      `${at('alpha', 'UpdateSchedule')}${cron} (found 7), got "0 0 6 * * * *"`,
      `${at('alpha', 'TimeZone')}expected an IANA time zone name such as Europe/Berlin or UTC, got "Mars/Olympus"`,
      `${at('alpha', 'When')}expected one of Now, RoundEnd, Empty, got "Sometime"`,
      `${at('alpha', 'MaxDelayMinutes')}expected a positive number of minutes, got -5`,
      `${at('beta', 'MaxDelayMinutes')}expected a positive number of minutes, got 0`,
      `${at('beta', 'MaxDelay')}unknown key (expected one of RestartSchedule, UpdateSchedule, TimeZone, When, MaxDelayMinutes, Announcements, Commands)`,
    ].sort(),
  );
});

test.run();
