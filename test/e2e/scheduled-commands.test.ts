/**
 * A console command on a maintenance schedule through the real daemon: a fixture server that answers each console
 * line (`console: <line>`) gets `Maintenance.Commands`' command at each fire, and each is an audit line by `schedule`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../_support/config.ts';
import { daemonSuite } from '../_support/daemon.ts';
import { freePort, ROOT, waitFor } from '../_support/env.ts';

const ECHO = join(ROOT, 'test/fixtures/servers/console-echo.mjs');

const test = daemonSuite('e2e :: scheduled console commands', {
  prefix: 'wd-sched-cmd-e2e-',
  config: async () =>
    testConfig({
      instances: [
        {
          key: 'tick',
          port: await freePort(),
          runCommand: ECHO,
          // Every second (six fields: seconds first), so the test sees two fires within seconds.
          extra: [
            '      Console: true',
            '      Maintenance:',
            "        Commands: [{ Schedule: '* * * * * *', Command: 'say tick' }]",
          ].join('\n'),
        },
      ],
    }),
});

test('scheduled commands :: the server gets the command at each fire, audited as sent by the schedule', async (ctx) => {
  const d = ctx.daemon!;
  const answers = () =>
    d
      .log()
      .split('\n')
      .filter((l) => l.includes('console: say tick')).length;
  await waitFor('two fires answered by the server', () => (answers() >= 2 ? true : undefined), 20_000);
  const audited = await waitFor(
    'audit lines by the schedule',
    async () => {
      const text = await readFile(join(ctx.dir, 'logs/audit.log'), 'utf8').catch(() => '');
      const lines = text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.action === 'console' && l.user === 'schedule' && l.command === 'say tick' && l.status === 200);
      return lines.length >= 2 ? lines : undefined;
    },
    10_000,
  );
  assert.is(audited[0]?.key, 'tick');
});

test.run();
