import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig, type LoadResult } from '../../src/config/load.ts';
import type { ResolvedConfig } from '../../src/config/resolved.ts';
import { tempDir } from '../_support/env.ts';
import { oneInstance, writeFiles } from './files.ts';

interface Ctx { dir: string; cleanup: () => Promise<void> }

function makeSuite(name: string) {
  const s = suite<Ctx>(name, { dir: '', cleanup: async () => {} });
  s.before.each(async (ctx) => {
    const t = await tempDir('wd-config-');
    ctx.dir = t.path;
    ctx.cleanup = t.cleanup;
  });
  s.after.each(async (ctx) => {
    await ctx.cleanup();
  });
  return s;
}

function ok(r: LoadResult): { config: ResolvedConfig; warnings: string[] } {
  if (!r.ok) assert.unreachable(`expected a valid config, got:\n${r.problems.join('\n')}`);
  return r as { ok: true; config: ResolvedConfig; warnings: string[] };
}

// ---

const layering = makeSuite('config/load :: layering');

layering('load :: env and Secret files merge over the main file, later wins, lists replace', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': [
      'Urls: http://localhost:5000',
      'Servers:',
      '  Instances:',
      '    alpha:',
      '      Name: Alpha',
      '      ApiPort: 1212',
      '      ApiToken: from-main',
      '      Arguments: [a, b, c]',
      '      EnvironmentVariables: { A: "1", B: "2" }',
    ],
    'appsettings.Staging.yml': [
      'Urls: http://127.0.0.1:6000',
      'Servers:',
      '  Instances:',
      '    alpha:',
      '      Arguments: [x]',
      '      EnvironmentVariables: { B: "20", C: "30" }',
      '    beta:',
      '      ApiPort: 1213',
    ],
    'appsettings.Secret.yml': [
      'Servers:',
      '  Instances:',
      '    alpha:',
      '      ApiToken: from-secret',
    ],
    // Not selected: must be ignored.
    'appsettings.Production.yml': ['Urls: http://127.0.0.1:7777'],
  });
  const { config } = ok(await loadConfig({ cwd: dir, env: { WATCHDOG_ENV: 'Staging' } }));
  assert.equal(config.files, ['appsettings.yml', 'appsettings.Staging.yml', 'appsettings.Secret.yml'].map((f) => join(dir, f)));
  assert.equal(config.listen, { host: '127.0.0.1', port: 6000 });
  const [alpha, beta] = config.instances;
  assert.is(alpha?.name, 'Alpha');
  assert.is(alpha?.apiToken, 'from-secret');
  assert.equal(alpha?.settings.Arguments, ['x']);
  assert.equal(alpha?.settings.EnvironmentVariables, { A: '1', B: '20', C: '30' });
  assert.is(beta?.key, 'beta');
  assert.is(beta?.name, 'beta', 'Name defaults to the key');
});

layering('load :: WATCHDOG_ENV defaults to Production', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(),
    'appsettings.Production.yml': ['Urls: http://127.0.0.1:7001'],
    'appsettings.Development.yml': ['Urls: http://127.0.0.1:7002'],
  });
  const { config } = ok(await loadConfig({ cwd: dir, env: {} }));
  assert.is(config.listen.port, 7001);
});

layering('load :: --config FILE layers the files named after it, beside it', async ({ dir }) => {
  await mkdir(join(dir, 'etc'));
  await writeFiles(dir, {
    'etc/site.yml': oneInstance(['ApiToken: main']),
    'etc/site.Secret.yml': ['Servers:', '  Instances:', '    alpha:', '      ApiToken: secret'],
    // In the working directory, not beside the file: not read.
    'appsettings.Secret.yml': ['Urls: http://127.0.0.1:1'],
  });
  const { config } = ok(await loadConfig({ file: 'etc/site.yml', cwd: dir, env: {} }));
  assert.equal(config.files, [join(dir, 'etc/site.yml'), join(dir, 'etc/site.Secret.yml')]);
  assert.is(config.instances[0]?.apiToken, 'secret');
  assert.equal(config.listen, { host: '127.0.0.1', port: 5000 });
});

layering('load :: a problem in a layered file names that file', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(),
    'appsettings.Secret.yml': ['Servers:', '  Instances:', '    alpha:', '      TimeoutSeconds: soon'],
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.equal(r.ok ? [] : r.problems, ['appsettings.Secret.yml: Servers.Instances.alpha.TimeoutSeconds: expected a number of seconds, got "soon"']);
});

layering('load :: a missing appsettings.yml names the folder it looked in', async ({ dir }) => {
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.not.ok(r.ok);
  const problems = r.ok ? [] : r.problems;
  assert.is(problems.length, 1);
  assert.ok(problems[0]?.includes(dir), problems[0]);
  assert.ok(problems[0]?.includes('appsettings.yml'), problems[0]);
});

layering.run();

// ---

const resolution = makeSuite('config/load :: resolution');

resolution('load :: paths resolve against the working directory, RunCommand against the instance folder', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': [
      'BaseUrl: http://example.test:5000',
      'Servers:',
      '  InstanceRoot: srv',
      '  Instances:',
      '    alpha:',
      '      ApiPort: 1212',
      '      RunCommand: ../../bin/demo-server',
      '    beta:',
      '      ApiPort: 1213',
      '      RunCommand: /opt/game/server',
      '    gamma:',
      '      ApiPort: 1214',
    ],
  });
  const { config } = ok(await loadConfig({ cwd: dir, env: {} }));
  const [alpha, beta, gamma] = config.instances;
  assert.is(config.workDir, dir);
  assert.is(alpha?.dir, join(dir, 'srv', 'alpha'));
  assert.is(alpha?.program, join(dir, 'bin', 'demo-server'));
  assert.is(beta?.program, '/opt/game/server');
  assert.is(gamma?.program, join(dir, 'srv', 'gamma', process.platform === 'win32' ? 'bin/Robust.Server.exe' : 'bin/Robust.Server'));
  assert.is(config.baseUrl, 'http://example.test:5000/', 'BaseUrl gains its trailing slash');
  assert.is(config.logLevel, 'info');
  assert.is(alpha?.settings.TimeoutSeconds, 90, 'the real watchdog default');
  assert.is(config.persistServers, false);
});

resolution('load :: ApiTokenFile: ONE trailing newline trimmed, and it overrides ApiToken', async ({ dir }) => {
  await writeFiles(dir, {
    'unix.txt': 'tok-unix\n',
    'dos.txt': 'tok-dos\r\n',
    'two.txt': 'tok-two\n\n',
    'bare.txt': 'tok-bare',
    'appsettings.yml': [
      'Servers:',
      '  Instances:',
      ...['unix', 'dos', 'two', 'bare'].flatMap((k, i) => [
        `    ${k}:`,
        `      ApiPort: ${2000 + i}`,
        '      ApiToken: inline',
        `      ApiTokenFile: ${k}.txt`,
      ]),
    ],
  });
  const { config } = ok(await loadConfig({ cwd: dir, env: {} }));
  assert.equal(config.instances.map((i) => i.apiToken), ['tok-unix', 'tok-dos', 'tok-two\n', 'tok-bare']);
});

resolution('load :: Serilog.MinimumLevel(.Default) sets the log level', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance([], ['Serilog:', '  MinimumLevel:', '    Default: Warning', '    Override: { Microsoft: Error }']) });
  assert.is(ok(await loadConfig({ cwd: dir, env: {} })).config.logLevel, 'warn');
  await writeFiles(dir, { 'appsettings.yml': oneInstance([], ['Serilog:', '  MinimumLevel: Debug']) });
  assert.is(ok(await loadConfig({ cwd: dir, env: {} })).config.logLevel, 'debug');
});

resolution('load :: Admin password from PasswordFile', async ({ dir }) => {
  await writeFiles(dir, { 'pw.txt': 'hunter2\n', 'appsettings.yml': oneInstance([], ['Admin:', '  Username: root', '  PasswordFile: pw.txt']) });
  assert.equal(ok(await loadConfig({ cwd: dir, env: {} })).config.admin, { username: 'root', password: 'hunter2' });
});

resolution('load :: YAML 1.2: yes is a string, so a boolean key refuses it', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance(['DumpOnTimeout: yes']) });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.equal(r.ok ? [] : r.problems, ['appsettings.yml: Servers.Instances.alpha.DumpOnTimeout: expected true or false, got "yes"']);
});

resolution('load :: the repository default appsettings.yml is valid and runs the demo server', async () => {
  const root = new URL('../../', import.meta.url).pathname;
  const { config } = ok(await loadConfig({ cwd: root, env: {} }));
  const demo = config.instances[0];
  assert.is(config.instances.length, 1);
  assert.is(demo?.key, 'demo');
  assert.is(demo?.program, join(root, 'bin', 'demo-server'));
  assert.is(demo?.settings.UpdateType, 'Dummy');
  assert.is(demo?.settings.ApiPort, 1212);
  assert.equal(config.listen, { host: '127.0.0.1', port: 5000 });
});

resolution.run();

// ---

const urls = makeSuite('config/load :: Urls');

urls('load :: Urls forms map to a bind address', async ({ dir }) => {
  const cases: [string, { host: string; port: number }][] = [
    ['http://*:5000', { host: '0.0.0.0', port: 5000 }],
    ['http://+:5001', { host: '0.0.0.0', port: 5001 }],
    ['http://localhost:5002', { host: '127.0.0.1', port: 5002 }],
    ['http://127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['http://[::1]:5003/', { host: '::1', port: 5003 }],
    ['http://10.1.2.3:5004', { host: '10.1.2.3', port: 5004 }],
  ];
  for (const [value, listen] of cases) {
    await writeFiles(dir, { 'appsettings.yml': oneInstance(['ApiToken: t'], [`Urls: "${value}"`]) });
    const r = ok(await loadConfig({ cwd: dir, env: {} }));
    assert.equal(r.config.listen, listen, value);
    assert.equal(r.warnings, [], value);
  }
});

urls('load :: only the first of several Urls is used, with a warning', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance(['ApiToken: t'], ['Urls: http://localhost:5000;http://*:6000']) });
  const r = ok(await loadConfig({ cwd: dir, env: {} }));
  assert.equal(r.config.listen, { host: '127.0.0.1', port: 5000 });
  assert.equal(r.warnings, ['appsettings.yml: Urls: only the first address is used; ignoring http://*:6000']);
});

urls.run();

// ---

const ignored = makeSuite('config/load :: keys of the real watchdog we ignore');

ignored('load :: Data, systemd Process keys and Mode: Systemd warn instead of failing', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(['ApiToken: t'], [
      'Data:',
      '  File: data.db',
      'Process:',
      '  Mode: Systemd',
      '  UnitManagementMode: TransientFixed',
      '  UnitPrefix: game-',
      '  Manager: System',
      'Serilog:',
      '  Loki: { Address: "http://loki:3100" }',
      'AllowedHosts: "*"',
    ]),
  });
  const r = ok(await loadConfig({ cwd: dir, env: {} }));
  const joined = r.warnings.join('\n');
  for (const key of ['Process.Mode', 'Process.UnitManagementMode', 'Process.UnitPrefix', 'Process.Manager']) {
    assert.ok(joined.includes(`appsettings.yml: ${key}: `), `warns about ${key}: ${joined}`);
  }
  assert.is(r.warnings.length, 4);
  assert.is(r.config.dataFile, join(dir, 'data.db'));
});

ignored('load :: an instance without any token gets a warning', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance() });
  const r = ok(await loadConfig({ cwd: dir, env: {} }));
  assert.is(r.config.instances[0]?.apiToken, undefined);
  assert.equal(r.warnings, ['appsettings.yml: Servers.Instances.alpha: no ApiToken or ApiTokenFile: every control request for this instance will be refused']);
});

ignored.run();
