import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { type LoadResult, loadConfig } from '../../src/config/load.ts';
import type { ResolvedConfig } from '../../src/config/resolved.ts';
import { ROOT, tempSuite } from '../_support/env.ts';
import { oneInstance, serversYaml, writeFiles } from './_support/files.ts';

const makeSuite = (name: string) => tempSuite(name, { prefix: 'wd-config-' });

function ok(r: LoadResult): { config: ResolvedConfig; warnings: string[] } {
  if (!r.ok) assert.unreachable(`expected a valid config, got:\n${r.problems.join('\n')}`);
  return r as { ok: true; config: ResolvedConfig; warnings: string[] };
}

// ---

const layering = makeSuite('config/load :: layering');

layering('load :: env and Secret files merge over the main file, later wins, lists replace', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml(
      {
        alpha: [
          'Name: Alpha',
          'ApiPort: 1212',
          'ApiToken: from-main',
          'Arguments: [a, b, c]',
          'EnvironmentVariables: { A: "1", B: "2" }',
        ],
      },
      { top: ['Urls: http://localhost:5000'] },
    ),
    'appsettings.Staging.yml': serversYaml(
      { alpha: ['Arguments: [x]', 'EnvironmentVariables: { B: "20", C: "30" }'], beta: ['ApiPort: 1213'] },
      { top: ['Urls: http://127.0.0.1:6000'] },
    ),
    'appsettings.Secret.yml': serversYaml({ alpha: ['ApiToken: from-secret'] }),
    // Not selected: must be ignored.
    'appsettings.Production.yml': ['Urls: http://127.0.0.1:7777'],
  });
  const { config } = ok(await loadConfig({ cwd: dir, env: { WATCHDOG_ENV: 'Staging' } }));
  assert.equal(
    config.files,
    ['appsettings.yml', 'appsettings.Staging.yml', 'appsettings.Secret.yml'].map((f) => join(dir, f)),
  );
  assert.equal(config.listen, [{ host: '127.0.0.1', port: 6000 }]);
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
  assert.is(config.listen[0]?.port, 7001);
});

layering('load :: --config FILE layers the files named after it, beside it', async ({ dir }) => {
  await mkdir(join(dir, 'etc'));
  await writeFiles(dir, {
    'etc/site.yml': oneInstance(['ApiToken: main']),
    'etc/site.Secret.yml': serversYaml({ alpha: ['ApiToken: secret'] }),
    // In the working directory, not beside the file: not read.
    'appsettings.Secret.yml': ['Urls: http://127.0.0.1:1'],
  });
  const { config } = ok(await loadConfig({ file: 'etc/site.yml', cwd: dir, env: {} }));
  assert.equal(config.files, [join(dir, 'etc/site.yml'), join(dir, 'etc/site.Secret.yml')]);
  assert.is(config.instances[0]?.apiToken, 'secret');
  assert.equal(config.listen, [{ host: 'localhost', port: 5000 }]);
});

layering('load :: a problem in a layered file names that file', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(),
    'appsettings.Secret.yml': serversYaml({ alpha: ['TimeoutSeconds: soon'] }),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.equal(r.ok ? [] : r.problems, [
    'appsettings.Secret.yml: Servers.Instances.alpha.TimeoutSeconds: expected a number of seconds, got "soon"',
  ]);
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

resolution(
  'load :: paths resolve against the working directory, RunCommand against the instance folder',
  async ({ dir }) => {
    await writeFiles(dir, {
      'appsettings.yml': serversYaml(
        {
          alpha: ['ApiPort: 1212', 'RunCommand: ../../bin/demo-server'],
          beta: ['ApiPort: 1213', 'RunCommand: /opt/game/server'],
          gamma: ['ApiPort: 1214'],
        },
        { top: ['BaseUrl: http://example.test:5000'], servers: ['InstanceRoot: srv'] },
      ),
    });
    const { config } = ok(await loadConfig({ cwd: dir, env: {} }));
    const [alpha, beta, gamma] = config.instances;
    assert.is(config.workDir, dir);
    assert.is(alpha?.dir, join(dir, 'srv', 'alpha'));
    assert.is(alpha?.program, join(dir, 'bin', 'demo-server'));
    assert.is(beta?.program, '/opt/game/server');
    assert.is(
      gamma?.program,
      join(dir, 'srv', 'gamma', process.platform === 'win32' ? 'bin/Robust.Server.exe' : 'bin/Robust.Server'),
    );
    assert.is(config.baseUrl, 'http://example.test:5000/', 'BaseUrl gains its trailing slash');
    assert.is(config.logLevel, 'info');
    assert.is(alpha?.settings.TimeoutSeconds, 90, 'the real watchdog default');
    assert.is(config.persistServers, false);
  },
);

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
  assert.equal(
    config.instances.map((i) => i.apiToken),
    ['tok-unix', 'tok-dos', 'tok-two\n', 'tok-bare'],
  );
});

resolution('load :: Serilog.MinimumLevel(.Default) sets the log level', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      [],
      ['Serilog:', '  MinimumLevel:', '    Default: Warning', '    Override: { Microsoft: Error }'],
    ),
  });
  assert.is(ok(await loadConfig({ cwd: dir, env: {} })).config.logLevel, 'warn');
  await writeFiles(dir, { 'appsettings.yml': oneInstance([], ['Serilog:', '  MinimumLevel: Debug']) });
  assert.is(ok(await loadConfig({ cwd: dir, env: {} })).config.logLevel, 'debug');
});

resolution('load :: Admin password from PasswordFile', async ({ dir }) => {
  await writeFiles(dir, {
    'pw.txt': 'hunter2\n',
    'appsettings.yml': oneInstance([], ['Admin:', '  Username: root', '  PasswordFile: pw.txt']),
  });
  assert.equal(ok(await loadConfig({ cwd: dir, env: {} })).config.admin, { username: 'root', password: 'hunter2' });
});

resolution('load :: YAML 1.2: yes is a string, so a boolean key refuses it', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance(['DumpOnTimeout: yes']) });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.equal(r.ok ? [] : r.problems, [
    'appsettings.yml: Servers.Instances.alpha.DumpOnTimeout: expected true or false, got "yes"',
  ]);
});

resolution('load :: the repository default appsettings.yml is valid and runs the demo server', async () => {
  const root = ROOT;
  const { config } = ok(await loadConfig({ cwd: root, env: {} }));
  const demo = config.instances[0];
  assert.is(config.instances.length, 1);
  assert.is(demo?.key, 'demo');
  assert.is(demo?.program, join(root, 'bin', 'demo-server'));
  assert.is(demo?.settings.UpdateType, 'Dummy');
  assert.is(demo?.settings.ApiPort, 1212);
  assert.equal(config.listen, [{ host: 'localhost', port: 5000 }]);
});

resolution.run();

// ---

const urls = makeSuite('config/load :: Urls');

urls('load :: Urls forms map to a bind address', async ({ dir }) => {
  // [Urls, the host bound, the port]
  const cases: [string, string, number][] = [
    ['http://*:5000', '*', 5000],
    ['http://+:5001', '*', 5001],
    ['http://localhost:5002', 'localhost', 5002],
    ['http://LocalHost:5005', 'localhost', 5005],
    ['http://0.0.0.0:5006', '0.0.0.0', 5006],
    ['http://127.0.0.1:0', '127.0.0.1', 0],
    ['http://[::1]:5003/', '::1', 5003],
    ['http://10.1.2.3:5004', '10.1.2.3', 5004],
  ];
  for (const [value, host, port] of cases) {
    await writeFiles(dir, {
      'appsettings.yml': oneInstance(['ApiToken: a-long-enough-test-token'], [`Urls: "${value}"`]),
    });
    const r = ok(await loadConfig({ cwd: dir, env: {} }));
    assert.equal(r.config.listen, [{ host, port }], value);
    assert.equal(r.warnings, [], value);
  }
});

urls('load :: every address of a ;-separated Urls is bound, and a bad one is named', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      ['ApiToken: a-long-enough-test-token'],
      ['Urls: "http://localhost:5000; http://*:6000"'],
    ),
  });
  const r = ok(await loadConfig({ cwd: dir, env: {} }));
  assert.equal(r.config.listen, [
    { host: 'localhost', port: 5000 },
    { host: '*', port: 6000 },
  ]);
  assert.equal(r.warnings, []);
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(['ApiToken: t'], ['Urls: "http://localhost:5000;https://*:6001"']),
  });
  const bad = await loadConfig({ cwd: dir, env: {} });
  assert.equal(bad.ok ? [] : bad.problems, [
    'appsettings.yml: Urls: expected an http:// address (this watchdog does not terminate TLS; put a proxy in front for https) (in "https://*:6001"), got "http://localhost:5000;https://*:6001"',
  ]);
});

urls('load :: ASPNETCORE_URLS overrides the file and --urls overrides both', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance(['ApiToken: t'], ['Urls: http://127.0.0.1:5000']) });
  const fromEnv = ok(
    await loadConfig({ cwd: dir, env: { ASPNETCORE_URLS: 'http://127.0.0.1:5001;http://127.0.0.1:5002' } }),
  );
  assert.equal(fromEnv.config.listen, [
    { host: '127.0.0.1', port: 5001 },
    { host: '127.0.0.1', port: 5002 },
  ]);
  const fromFlag = ok(
    await loadConfig({ cwd: dir, env: { ASPNETCORE_URLS: 'http://127.0.0.1:5001' }, urls: 'http://127.0.0.1:5003' }),
  );
  assert.equal(fromFlag.config.listen, [{ host: '127.0.0.1', port: 5003 }]);
});

urls.run();

// ---

/** Top-level sections of a real watchdog's appsettings.yml that this one accepts and does not use. */
const FOREIGN_SECTIONS = [
  'Data:',
  '  File: data.db',
  'Process:',
  '  Mode: systemd',
  '  UnitManagementMode: TransientFixed',
  '  UnitPrefix: game-',
  '  Manager: System',
  'Serilog:',
  '  Using: [Serilog.Sinks.Console, Serilog.Sinks.Loki]',
  '  MinimumLevel:',
  '    Default: Information',
  '    Override: { SS14: Debug, Microsoft.AspNetCore: Warning, watchdog.http: Warning }',
  '  WriteTo: [{ Name: Console }]',
  '  Loki: { Address: "http://loki:3100" }',
  'AllowedHosts: "*"',
  'Kestrel: { Limits: { MaxConcurrentConnections: 100 } }',
  'Logging: { LogLevel: { Default: Warning } }',
];

const ignored = makeSuite('config/load :: keys of the real watchdog we ignore');

ignored(
  'load :: host sections, Serilog sinks, foreign overrides and systemd keys are named in one warning line',
  async ({ dir }) => {
    await writeFiles(dir, { 'appsettings.yml': oneInstance(['ApiToken: t'], FOREIGN_SECTIONS) });
    const r = ok(await loadConfig({ cwd: dir, env: {} }));
    assert.equal(r.warnings, [
      'accepted but not used by this watchdog: Kestrel (use Urls); Logging (use Serilog.MinimumLevel); ' +
        'Serilog.Using, Serilog.WriteTo, Serilog.Loki (the log goes to stderr; --log-format json for collectors); ' +
        'Serilog.MinimumLevel.Override for SS14, Microsoft.AspNetCore (only watchdog.* and audit scopes exist here); ' +
        'Process.Mode: Systemd (servers run as child processes of this watchdog); ' +
        'Process.UnitManagementMode, Process.UnitPrefix, Process.Manager (systemd units are not used)',
    ]);
    assert.is(r.config.dataFile, join(dir, 'data.db'));
    assert.equal(r.config.logOverrides, [['watchdog:http', 'warn']]);
    assert.is(r.config.settings.Process.Mode, 'Systemd');
  },
);

ignored('load :: an instance without any token gets a warning', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance() });
  const r = ok(await loadConfig({ cwd: dir, env: {} }));
  assert.is(r.config.instances[0]?.apiToken, undefined);
  assert.equal(r.warnings, [
    'appsettings.yml: Servers.Instances.alpha: no ApiToken or ApiTokenFile: control is refused but to users and keys (users.yml)',
  ]);
});

ignored.run();

// ---

const binding = makeSuite('config/load :: bound as .NET binds it');

binding('load :: keys match whatever their case; values keep the text written', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': [
      'urls: http://127.0.0.1:5100',
      'PROCESS: { persistservers: "true" }',
      'notification: { discordwebhook: "http://127.0.0.1:9/hook" }',
      'servers:',
      '  instances:',
      '    main:',
      '      apitoken: 0123456',
      '      APIPORT: "1212"',
      '      timeoutseconds: "90"',
      '      dumpontimeout: "False"',
      '      timeoutdumptype: full',
      '      updatetype: Jenkins',
      '      updates: { baseurl: "http://127.0.0.1:9/", jobname: Game }',
      '      environmentvariables: { DOTNET_TieredPGO: 0, FLAG: true }',
      '      arguments: [--cvar, 5]',
    ],
  });
  const r = ok(await loadConfig({ cwd: dir, env: {} }));
  const main = r.config.instances[0];
  assert.is(main?.key, 'main');
  assert.is(main?.apiToken, '0123456', 'the token as written, leading zero kept');
  assert.is(main?.settings.ApiPort, 1212);
  assert.is(main?.settings.TimeoutSeconds, 90);
  assert.is(main?.settings.DumpOnTimeout, false);
  assert.is(main?.settings.TimeoutDumpType, 'Full');
  assert.is(main?.settings.UpdateType, 'CiServer', 'Jenkins is CiServer');
  assert.is(main?.settings.Updates.JobName, 'Game');
  assert.equal(main?.settings.EnvironmentVariables, { DOTNET_TieredPGO: '0', FLAG: 'true' });
  assert.equal(main?.settings.Arguments, ['--cvar', '5']);
  assert.is(r.config.persistServers, true);
  assert.is(r.config.webhook, 'http://127.0.0.1:9/hook', 'DiscordWebhook is ChatWebhook');
  assert.equal(r.config.listen, [{ host: '127.0.0.1', port: 5100 }]);
  assert.equal(r.warnings, []);
});

binding(
  'load :: DiscordWebhook is ChatWebhook: a later layer overrides either spelling, both in one map is a problem',
  async ({ dir }) => {
    await writeFiles(dir, {
      'appsettings.yml': oneInstance([], ['Notification: { ChatWebhook: "http://127.0.0.1:9/file" }']),
    });
    const env = ok(await loadConfig({ cwd: dir, env: { Notification__DiscordWebhook: 'http://127.0.0.1:9/env' } }));
    assert.is(env.config.webhook, 'http://127.0.0.1:9/env', 'the variable wins, whichever name each uses');
    await writeFiles(dir, {
      'appsettings.yml': oneInstance(
        [],
        ['Notification: { ChatWebhook: "http://127.0.0.1:9/a", DiscordWebhook: "http://127.0.0.1:9/b" }'],
      ),
    });
    const r = await loadConfig({ cwd: dir, env: {} });
    assert.equal(r.ok ? [] : r.problems, [
      "appsettings.yml: Notification.DiscordWebhook: the same setting as ChatWebhook (keys are case-insensitive, and the real watchdog's names are aliases); keep one",
    ]);
  },
);

binding(
  'load :: .NET-style environment variables override every file, case-insensitively, naming the variable in problems',
  async ({ dir }) => {
    await writeFiles(dir, {
      'appsettings.yml': oneInstance(['ApiToken: from-file', 'Arguments: [a, b, c]']),
      'appsettings.Secret.yml': serversYaml({ alpha: ['ApiToken: from-secret'] }),
    });
    const env = {
      Servers__Instances__alpha__ApiToken: 'from-env',
      SERVERS__INSTANCES__ALPHA__TIMEOUTSECONDS: '45',
      Servers__Instances__alpha__Arguments__1: 'B',
      Notification__DiscordWebhook: 'http://127.0.0.1:9/hook',
      Process__PersistServers: 'True',
      PATH: '/usr/bin',
      UNRELATED__THING: 'x',
    };
    const r = ok(await loadConfig({ cwd: dir, env }));
    const alpha = r.config.instances[0];
    assert.is(r.config.instances.length, 1, 'ALPHA and alpha are one instance');
    assert.is(alpha?.apiToken, 'from-env');
    assert.is(alpha?.settings.TimeoutSeconds, 45);
    assert.equal(alpha?.settings.Arguments, ['a', 'B', 'c'], 'one list item replaced by index');
    assert.is(r.config.webhook, 'http://127.0.0.1:9/hook');
    assert.is(r.config.persistServers, true);

    const bad = await loadConfig({
      cwd: dir,
      env: { Servers__Instances__alpha__ApiPortt: '1', Servers__Instances__alpha__TimeoutSeconds: 'soon' },
    });
    assert.equal((bad.ok ? [] : bad.problems).sort(), [
      'environment variable Servers__Instances__alpha__ApiPortt: Servers.Instances.alpha.ApiPortt: unknown key (did you mean ApiPort?)',
      'environment variable Servers__Instances__alpha__TimeoutSeconds: Servers.Instances.alpha.TimeoutSeconds: expected a number of seconds, got "soon"',
    ]);
  },
);

binding(
  'load :: the environment name comes from WATCHDOG_ENV, else DOTNET_ENVIRONMENT, else ASPNETCORE_ENVIRONMENT',
  async ({ dir }) => {
    await writeFiles(dir, {
      'appsettings.yml': oneInstance(['ApiToken: base']),
      'appsettings.Development.yml': serversYaml({ alpha: ['ApiToken: dev'] }),
      'appsettings.Staging.yml': serversYaml({ alpha: ['ApiToken: staging'] }),
      'appsettings.Test.yml': serversYaml({ alpha: ['ApiToken: test'] }),
    });
    const token = async (env: Record<string, string>) =>
      ok(await loadConfig({ cwd: dir, env })).config.instances[0]?.apiToken;
    assert.is(await token({}), 'base', 'Production by default');
    assert.is(await token({ ASPNETCORE_ENVIRONMENT: 'Staging' }), 'staging');
    assert.is(await token({ ASPNETCORE_ENVIRONMENT: 'Staging', DOTNET_ENVIRONMENT: 'Development' }), 'dev');
    assert.is(
      await token({ ASPNETCORE_ENVIRONMENT: 'Staging', DOTNET_ENVIRONMENT: 'Development', WATCHDOG_ENV: 'Test' }),
      'test',
    );
    const bad = await loadConfig({ cwd: dir, env: { DOTNET_ENVIRONMENT: '../x' } });
    assert.equal(bad.ok ? [] : bad.problems, [
      'DOTNET_ENVIRONMENT: expected a name of letters, digits, "_" and "-" such as Development, got "../x"',
    ]);
  },
);

binding.run();
