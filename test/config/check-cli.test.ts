import { readdir } from 'node:fs/promises';
import * as assert from 'uvu/assert';
import { runMain } from '../_support/cli.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, serversYaml, writeFiles } from './_support/files.ts';

/** `watchdog check …` from `cwd`, without a WATCHDOG_ENV of the caller's. */
const check = (args: string[], cwd: string) => runMain(['check', ...args], { cwd, env: { WATCHDOG_ENV: '' } });

const cli = tempSuite('cli/check :: the real command', { prefix: 'wd-check-' });

cli('check :: a bad config exits 2, one line per problem, and creates no folder', async ({ dir }) => {
  await writeFiles(dir, {
    'bad.yml': serversYaml(
      { alpha: ['ApiPort: 70000', 'TimeoutSeconds: -1', 'UpdateType: Jenkins'] },
      { top: ['BaseUrl: nope'], servers: ['InstanceRoot: instances'] },
    ),
  });
  const r = await check(['--config', 'bad.yml'], dir);
  assert.is(r.code, 2, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines, [
    'bad.yml: BaseUrl: expected an http(s) URL such as http://localhost:5000/, got "nope"',
    'bad.yml: Servers.Instances.alpha.ApiPort: expected an integer 1-65535, got 70000',
    'bad.yml: Servers.Instances.alpha.TimeoutSeconds: expected a positive number of seconds, got -1',
    'bad.yml: Servers.Instances.alpha.Updates.BaseUrl: expected the Jenkins URL because UpdateType is Jenkins, got nothing',
    'bad.yml: Servers.Instances.alpha.Updates.JobName: expected the Jenkins job name because UpdateType is Jenkins, got nothing',
  ]);
  assert.is(r.stdout, '');
  assert.equal(await readdir(dir), ['bad.yml'], 'nothing created');
});

cli('check :: a good config exits 0 with a summary, still touching nothing', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      ['Name: Alpha one', 'ApiToken: t', 'UpdateType: Dummy', 'TimeoutSeconds: 30', 'RunCommand: /opt/game/run'],
      [
        'Urls: http://*:0',
        'Notification:',
        '  Routes:',
        '    - { Ntfy: "https://ntfy.example/s3cr3t", Events: [crash] }',
        '    - { Command: [/usr/local/bin/page], Events: [crash] }',
      ],
    ),
  });
  const summary = [
    'routes:    2 (Notification.Routes: Ntfy, Command)',
    'files:     appsettings.yml',
    'listen:    http://*:0 (all interfaces)',
    'alpha ("Alpha one")',
    'update type: Dummy',
    'api port:    1212',
    'timeout:     30 s',
    'program:     /opt/game/run',
  ];
  const r = await check([], dir);
  assert.is(r.code, 0, r.stderr);
  const missing = summary.filter((part) => !r.stdout.includes(part));
  assert.equal(missing, [], `the summary shows every part:\n${r.stdout}`);
  assert.not.match(r.stdout, /s3cr3t/, 'no destination URL shown');
  assert.equal(await readdir(dir), ['appsettings.yml'], 'nothing created');
});

cli('check :: without appsettings.yml exits 2 naming the folder; a bad option is a usage error', async ({ dir }) => {
  const [missing, usage] = await Promise.all([check([], dir), check(['--frobnicate'], dir)]);
  assert.is(missing.code, 2);
  assert.ok(missing.stderr.includes(dir), missing.stderr);
  assert.is(usage.code, 2);
  assert.match(usage.stderr, /frobnicate/);
  assert.equal(await readdir(dir), []);
});

cli.run();
