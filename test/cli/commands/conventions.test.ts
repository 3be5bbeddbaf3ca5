import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { COMMANDS } from '../../../src/cli/registry.ts';
import { type CliResult, cliSuite, runCli, runMain } from '../../_support/cli.ts';
import { testConfig } from '../../_support/config.ts';
import { ROOT } from '../../_support/env.ts';

const help = cliSuite('watchdog CLI :: -h/--help and -V/--version', 'wd-cli-conventions-');

help('conventions :: every command: -h or --help prints its usage on stdout and exits 0', async ({ cwd }) => {
  const names = Object.keys(COMMANDS);
  assert.ok(names.length >= 13, 'the command list from the dispatcher');
  const check = (name: string, flag: string, r: CliResult) => {
    assert.is(r.code, 0, `${name} ${flag}: exit ${r.code}\n${r.stderr}`);
    assert.ok(
      r.stdout.startsWith(`usage: watchdog ${name === 'start' ? '[start]' : name}`),
      `${name} ${flag}: ${r.stdout}`,
    );
    assert.is(r.stderr, '', `${name} ${flag}`);
  };
  // Each command through main() in this process (the answer depends on the arguments alone), both flags; and two
  // through the real bin, so the process's own start, output and exit code are covered too.
  for (const name of names) for (const flag of ['--help', '-h']) check(name, flag, await runMain([name, flag]));
  for (const [name, flag] of [
    ['status', '--help'],
    ['restart', '-h'],
  ] as const)
    check(name, flag, await runCli([name, flag], { cwd }));
});

help(
  'conventions :: --help wins over other arguments, even ones that would be errors; `help <command>` is the same',
  async () => {
    const withOthers = await runMain(['restart', 'demo', '--url', 'http://127.0.0.1:9', '--help']);
    const bogus = await runMain(['start', '--bogus', '-h']);
    const helpStatus = await runMain(['help', 'status']);
    const top = await runMain(['--help']);
    for (const r of [withOthers, bogus, helpStatus, top]) assert.is(r.code, 0, r.stderr);
    assert.match(withOthers.stdout, /^usage: watchdog restart <key>/);
    assert.match(bogus.stdout, /^usage: watchdog \[start\]/);
    assert.match(helpStatus.stdout, /^usage: watchdog status/);
    for (const name of Object.keys(COMMANDS))
      assert.match(top.stdout, new RegExp(`^  ${name}\\b|\\|${name}\\b`, 'm'), `${name} in watchdog --help`);
  },
);

help('conventions :: --version and -V print the package version', async ({ cwd }) => {
  const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const r = await runCli([flag], { cwd });
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout, `watchdog ${version}\n`);
  }
});

help('conventions :: a bad option to start is a usage error (exit 2), not a crash', async ({ cwd }) => {
  const r = await runCli(['start', '--bogus'], { cwd });
  assert.is(r.code, 2, r.stderr);
  assert.match(r.stderr, /unknown option --bogus\n/);
  assert.match(r.stderr, /usage: watchdog \[start\]/);
});

help.run();

// ---

const completion = cliSuite('watchdog completion :: scripts for bash, zsh and fish', 'wd-cli-conventions-');

const has = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;

// One test per shell, so a shell that is not installed counts as skipped in the run's last line (.ci/run installs
// zsh and fish).
for (const shell of ['bash', 'zsh', 'fish']) {
  const name = `the ${shell} script parses in ${shell}`;
  if (!has(shell)) {
    console.log(`skipped "${name}": ${shell} is not installed`);
    completion.skip(name, () => undefined);
    continue;
  }
  completion(name, async ({ cwd }) => {
    const r = await runMain(['completion', shell], { cwd });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /watchdog/);
    const file = join(cwd, `watchdog.${shell}`);
    await writeFile(file, r.stdout);
    const parsed = spawnSync(shell, ['-n', file], { encoding: 'utf8', timeout: 10_000 });
    assert.is(parsed.status, 0, `${shell} -n: ${parsed.stderr}`);
  });
}

completion('conventions :: an unknown shell is a usage error', async ({ cwd }) => {
  const bad = await runMain(['completion', 'tcsh'], { cwd });
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /unknown shell "tcsh"; choose one of bash, zsh, fish/);
});

/** What bash offers for the words typed so far (the last one being completed), in the folder `cwd`. */
function bashComplete(script: string, cwd: string, words: string[]): string[] {
  const line = `source ${JSON.stringify(script)}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _watchdog; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync('bash', ['-c', line], { cwd, encoding: 'utf8', timeout: 10_000 });
  assert.is(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l !== '');
}

completion(
  "conventions :: bash: commands, a command's flags, option values, and instance keys from ./appsettings.yml",
  async ({ cwd }) => {
    const r = await runMain(['completion', 'bash'], { cwd });
    const script = join(cwd, 'watchdog.bash');
    await writeFile(script, r.stdout);
    const dir = join(cwd, 'daemon');
    await mkdir(dir);
    await writeFile(
      join(dir, 'appsettings.yml'),
      testConfig({
        instances: [
          { key: 'alpha', port: 4301 },
          { key: 'beta', port: 4302 },
        ],
      }),
    );
    assert.equal(bashComplete(script, dir, ['watchdog', 'st']), ['start', 'stop', 'status']);
    assert.equal(bashComplete(script, dir, ['watchdog', 'restart', '']), ['alpha', 'beta']);
    assert.equal(bashComplete(script, dir, ['watchdog', 'logs', 'a']), ['alpha']);
    assert.equal(bashComplete(script, cwd, ['watchdog', 'restart', '']), [], 'no appsettings.yml: no keys');
    assert.equal(bashComplete(script, dir, ['watchdog', 'chart', '--format', '']), ['mermaid', 'dot', 'json']);
    assert.equal(bashComplete(script, dir, ['watchdog', 'completion', '']), ['bash', 'zsh', 'fish']);
    const logFlags = bashComplete(script, dir, ['watchdog', 'logs', '--']);
    for (const flag of ['--follow', '--lines', '--url', '--token', '--user', '--password', '--help'])
      assert.ok(logFlags.includes(flag), flag);
  },
);

completion.run();

// ---

const check = cliSuite('watchdog check :: RunCommand that nothing will install', 'wd-cli-conventions-');

check(
  'conventions :: warns for a missing or non-executable RunCommand under UpdateType none, Local or Dummy; not when a provider installs it',
  async ({ cwd }) => {
    const exe = join(cwd, 'server.sh');
    const plain = join(cwd, 'plain.txt');
    await writeFile(exe, '#!/bin/sh\n');
    await chmod(exe, 0o755);
    await writeFile(plain, 'not a program\n');
    const yaml = testConfig({
      instances: [
        { key: 'missing', port: 4401, runCommand: 'bin/Robust.Server' },
        { key: 'plain', port: 4402, runCommand: plain },
        {
          key: 'local',
          port: 4403,
          runCommand: 'nowhere/server',
          extra: '      UpdateType: Local\n      Updates: { CurrentVersion: "1" }',
        },
        { key: 'fine', port: 4404, runCommand: exe },
        {
          key: 'manifest',
          port: 4405,
          runCommand: 'bin/Robust.Server',
          extra: '      UpdateType: Manifest\n      Updates: { ManifestUrl: "http://127.0.0.1:9/manifest.json" }',
        },
      ],
    });
    await writeFile(join(cwd, 'appsettings.yml'), yaml);
    const r: CliResult = await runMain(['check'], { cwd });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /^configuration is valid/);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('RunCommand'));
    assert.equal(warnings, [
      'warning: Servers.Instances.missing.RunCommand: instances/missing/bin/Robust.Server does not exist, and with no UpdateType no update provider installs it; the server cannot start until it is there',
      `warning: Servers.Instances.plain.RunCommand: plain.txt is not executable (chmod +x it), and with no UpdateType no update provider installs it; the server cannot start until it is there`,
      'warning: Servers.Instances.local.RunCommand: instances/local/nowhere/server does not exist, and with UpdateType Local no update provider installs it; the server cannot start until it is there',
    ]);
  },
);

check.run();
