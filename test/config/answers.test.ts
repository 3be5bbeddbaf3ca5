import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { answerCap } from '../../src/config/sections/answers.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, writeFiles } from './_support/files.ts';

const test = tempSuite('config :: Answers, the caps of what the daemon reads', { prefix: 'wd-answers-config-' });

test('answers :: the defaults are the caps the readers had', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance() });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  assert.equal(r.config.settings.Answers, {
    ServerMaxKilobytes: 256,
    ServerTimeoutSeconds: 5,
    HubMaxKilobytes: 64,
    HubTimeoutSeconds: 10,
    NotificationMaxKilobytes: 64,
    BaseUrlMaxKilobytes: 64,
    BaseUrlTimeoutSeconds: 3,
    OidcMaxKilobytes: 256,
    OidcTimeoutSeconds: 10,
  });
  assert.equal(answerCap(r.config.settings.Answers, 'Hub'), {
    maxBytes: 64_000,
    timeoutMs: 10_000,
    setting: 'Answers.HubMaxKilobytes',
  });
});

test('answers :: a value set is taken in kilobytes (1000 bytes) and seconds; the rest keep their defaults', async ({
  dir,
}) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance([], ['Answers:', '  ServerMaxKilobytes: 1', '  OidcTimeoutSeconds: 0.5']),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  if (!r.ok) throw new Error(r.problems.join('\n'));
  const a = r.config.settings.Answers;
  assert.equal(answerCap(a, 'Server'), { maxBytes: 1000, timeoutMs: 5000, setting: 'Answers.ServerMaxKilobytes' });
  assert.equal(answerCap(a, 'Oidc'), { maxBytes: 256_000, timeoutMs: 500, setting: 'Answers.OidcMaxKilobytes' });
});

test('answers :: every bad value at once, with its key path', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      [],
      [
        'Answers:',
        '  HubMaxKilobytes: 0',
        '  NotificationMaxKilobytes: 1.5',
        '  BaseUrlMaxKilobytes: 2000000',
        '  HubTimeoutSeconds: 0',
        '  ServerMaxBytes: 5',
      ],
    ),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.not.ok(r.ok);
  const at = (path: string) => `appsettings.yml: Answers.${path}: `;
  const problems = r.ok ? [] : [...r.problems].sort();
  assert.equal(problems.slice(0, 4), [
    `${at('BaseUrlMaxKilobytes')}expected at most 1000000 kilobytes (1 GB): an answer is held in memory whole, got 2000000`,
    `${at('HubMaxKilobytes')}expected at least 1 kilobyte, got 0`,
    `${at('HubTimeoutSeconds')}expected a positive number of seconds, got 0`,
    `${at('NotificationMaxKilobytes')}expected a whole number of kilobytes, got 1.5`,
  ]);
  assert.match(problems[4] ?? '', /^appsettings\.yml: Answers\.ServerMaxBytes: unknown key .*ServerMaxKilobytes/);
  assert.is(problems.length, 5);
});

test.run();
