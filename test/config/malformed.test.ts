import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { runCli } from '../_support/cli.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, serversYaml, writeFiles } from './_support/files.ts';

const A = 'appsettings.yml: Servers.Instances.alpha';

/** Each malformed config and the exact problem lines it must produce, nothing more. */
const CASES: { name: string; files: Record<string, string[]>; dirs?: string[]; problems: (dir: string) => string[] }[] =
  [
    {
      name: 'YAML syntax error → file:line:col',
      files: { 'appsettings.yml': ['Servers:', '  Instances:', '    alpha:', '      ApiPort: [1212', '      Name: x'] },
      problems: () => [
        'appsettings.yml:5:7: Flow sequence in block collection must be sufficiently indented and end with a ]',
      ],
    },
    {
      // The parser goes on with "Implicit keys need to be on a single line" at the same place: noise, not shown.
      name: 'a key indented under a scalar: the first YAML error only',
      files: {
        'appsettings.yml': ['Servers:', '  Instances:', '    alpha:', '      ApiPort: 1212', '        Name: x'],
      },
      problems: () => ['appsettings.yml:4:16: Nested mappings are not allowed in compact mappings'],
    },
    {
      name: 'a setting at the top level that belongs in a section',
      files: { 'appsettings.yml': [...oneInstance(), 'DiscordWebhook: https://discord.invalid/api/webhooks/1/x'] },
      problems: () => ['appsettings.yml: DiscordWebhook: unknown key (it belongs under Notification)'],
    },
    {
      name: 'duplicate key in YAML',
      files: { 'appsettings.yml': [...oneInstance(), '      ApiPort: 1213'] },
      problems: () => ['appsettings.yml:5:7: Map keys must be unique'],
    },
    {
      name: 'missing ApiPort',
      files: { 'appsettings.yml': ['Servers:', '  Instances:', '    alpha:', '      Name: x'] },
      problems: () => [`${A}.ApiPort: expected an integer 1-65535, got nothing`],
    },
    {
      name: 'ApiPort "abc"',
      files: { 'appsettings.yml': ['Servers:', '  Instances:', '    alpha:', '      ApiPort: abc'] },
      problems: () => [`${A}.ApiPort: expected an integer 1-65535, got "abc"`],
    },
    {
      name: 'ApiPort 70000',
      files: { 'appsettings.yml': ['Servers:', '  Instances:', '    alpha:', '      ApiPort: 70000'] },
      problems: () => [`${A}.ApiPort: expected an integer 1-65535, got 70000`],
    },
    {
      name: 'bad BaseUrl',
      files: { 'appsettings.yml': oneInstance([], ['BaseUrl: localhost:5000']) },
      problems: () => [
        'appsettings.yml: BaseUrl: expected an http(s) URL such as http://localhost:5000/, got "localhost:5000"',
      ],
    },
    {
      name: 'unknown UpdateType',
      files: { 'appsettings.yml': oneInstance(['UpdateType: Jenkinz']) },
      problems: () => [
        `${A}.UpdateType: expected one of Manifest, Git, CiServer, Local, Dummy, Jenkins, got "Jenkinz"`,
      ],
    },
    {
      name: 'unsafe instance keys',
      files: {
        'appsettings.yml': [
          'Servers:',
          '  Instances:',
          '    "../x":',
          '      ApiPort: 1',
          '    "a b":',
          '      ApiPort: 2',
        ],
      },
      problems: () =>
        ['../x', 'a b'].map(
          (k) =>
            `appsettings.yml: Servers.Instances.${JSON.stringify(k)}: expected an instance id of letters, digits, "_", "." and "-" (at most 64, starting with a letter or digit), got ${JSON.stringify(k)}`,
        ),
    },
    {
      name: 'text that is no number for TimeoutSeconds',
      files: { 'appsettings.yml': oneInstance(['TimeoutSeconds: "sixty"']) },
      problems: () => [`${A}.TimeoutSeconds: expected a number of seconds, got "sixty"`],
    },
    {
      name: 'text that is no boolean for PersistServers (yes is not .NET-bindable)',
      files: { 'appsettings.yml': oneInstance([], ['Process:', '  PersistServers: yes']) },
      problems: () => ['appsettings.yml: Process.PersistServers: expected true or false, got "yes"'],
    },
    {
      name: 'the same key twice in different case',
      files: { 'appsettings.yml': [...oneInstance(), '      apiport: 1213'] },
      problems: () => [
        `${A}.apiport: the same setting as ApiPort (keys are case-insensitive, and the real watchdog's names are aliases); keep one`,
      ],
    },
    {
      name: 'list for EnvironmentVariables, list inside Arguments',
      files: { 'appsettings.yml': oneInstance(['EnvironmentVariables: [A=1]', 'Arguments: ["--cvar", [5]]']) },
      problems: () => [
        `${A}.Arguments[1]: expected a string, got a list`,
        `${A}.EnvironmentVariables: expected a map of names to strings, got a list`,
      ],
    },
    {
      name: 'negative timeout',
      files: { 'appsettings.yml': oneInstance(['TimeoutSeconds: -5']) },
      problems: () => [`${A}.TimeoutSeconds: expected a positive number of seconds, got -5`],
    },
    {
      name: 'Manifest without ManifestUrl, CiServer without JobName, Local without CurrentVersion',
      files: {
        'appsettings.yml': [
          'Servers:',
          '  Instances:',
          '    alpha:',
          '      ApiPort: 1',
          '      UpdateType: Manifest',
          '    beta:',
          '      ApiPort: 2',
          '      UpdateType: CiServer',
          '      Updates: { BaseUrl: "http://ci/" }',
          '    gamma:',
          '      ApiPort: 3',
          '      UpdateType: Local',
        ],
      },
      problems: () => [
        `${A}.Updates.ManifestUrl: expected a manifest URL because UpdateType is Manifest, got nothing`,
        'appsettings.yml: Servers.Instances.beta.Updates.JobName: expected the CI job name because UpdateType is CiServer, got nothing',
        'appsettings.yml: Servers.Instances.gamma.Updates.CurrentVersion: expected the version of the build in bin/ because UpdateType is Local, got nothing',
      ],
    },
    {
      name: 'unreadable ApiTokenFile (missing, a folder, empty)',
      dirs: ['tokdir'],
      files: {
        'empty.txt': [],
        'appsettings.yml': [
          'Servers:',
          '  Instances:',
          '    alpha:',
          '      ApiPort: 1',
          '      ApiTokenFile: nope.txt',
          '    beta:',
          '      ApiPort: 2',
          '      ApiTokenFile: tokdir',
          '    gamma:',
          '      ApiPort: 3',
          '      ApiTokenFile: empty.txt',
        ],
      },
      problems: (dir) => [
        `${A}.ApiTokenFile: expected a readable file holding the token (cannot read ${join(dir, 'nope.txt')}: no such file), got "nope.txt"`,
        `appsettings.yml: Servers.Instances.beta.ApiTokenFile: expected a readable file holding the token (cannot read ${join(dir, 'tokdir')}: it is a folder), got "tokdir"`,
        `appsettings.yml: Servers.Instances.gamma.ApiTokenFile: expected a readable file holding the token (${join(dir, 'empty.txt')} is empty), got "empty.txt"`,
      ],
    },
    {
      name: 'unknown top-level key (typo)',
      files: { 'appsettings.yml': oneInstance([], ['Notifications:', '  ChatWebhook: http://x/']) },
      problems: () => ['appsettings.yml: Notifications: unknown key (did you mean Notification?)'],
    },
    {
      name: 'unknown instance key (typo) and a misspelt DiscordWebhook',
      files: { 'appsettings.yml': oneInstance(['TimeoutSecond: 5'], ['Notification:', '  DiscordWebhok: http://x/']) },
      problems: () => [
        'appsettings.yml: Notification.DiscordWebhok: unknown key (did you mean DiscordWebhook?)',
        `${A}.TimeoutSecond: unknown key (did you mean TimeoutSeconds?)`,
      ],
    },
    {
      name: 'duplicate ApiPort',
      files: { 'appsettings.yml': [...oneInstance(), '    beta:', '      ApiPort: 1212'] },
      problems: () => [
        'appsettings.yml: Servers.Instances.beta.ApiPort: expected a port no other instance uses (alpha uses it), got 1212',
      ],
    },
    {
      name: 'bad Urls',
      files: { 'appsettings.yml': oneInstance([], ['Urls: localhost:5000']) },
      problems: () => [
        'appsettings.yml: Urls: expected http://<host>:<port> such as http://localhost:5000 or http://*:5000, got "localhost:5000"',
      ],
    },
    {
      name: 'https Urls',
      files: { 'appsettings.yml': oneInstance([], ['Urls: https://*:5001']) },
      problems: () => [
        'appsettings.yml: Urls: expected an http:// address (this watchdog does not terminate TLS; put a proxy in front for https), got "https://*:5001"',
      ],
    },
    {
      name: 'unknown log level',
      files: { 'appsettings.yml': oneInstance([], ['Serilog:', '  MinimumLevel:', '    Default: Chatty']) },
      problems: () => [
        'appsettings.yml: Serilog.MinimumLevel.Default: expected a level: Verbose, Debug, Information, Warning, Error or Fatal, got "Chatty"',
      ],
    },
    {
      name: 'Admin without a password',
      files: { 'appsettings.yml': oneInstance([], ['Admin:', '  Username: root']) },
      problems: () => [
        'appsettings.yml: Admin.Password: expected a password (or PasswordFile) because Admin is set, got nothing',
      ],
    },
    {
      name: 'TrustedProxies entries that are no address or CIDR block',
      files: { 'appsettings.yml': oneInstance([], ['TrustedProxies: [127.0.0.1, 10.0.0.0/40, proxy.local]']) },
      problems: () => [
        'appsettings.yml: TrustedProxies[1]: expected an IP address or a CIDR block such as 127.0.0.1, ::1 or 10.0.0.0/8, got "10.0.0.0/40"',
        'appsettings.yml: TrustedProxies[2]: expected an IP address or a CIDR block such as 127.0.0.1, ::1 or 10.0.0.0/8, got "proxy.local"',
      ],
    },
    {
      name: 'no Servers at all',
      files: { 'appsettings.yml': ['Urls: http://localhost:5000'] },
      problems: () => ['appsettings.yml: Servers: expected a map with Instances, got nothing'],
    },
    {
      name: 'an alias bomb is refused, not expanded',
      files: {
        'appsettings.yml': [
          'a: &a [x,x,x,x,x,x,x,x,x,x]',
          'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]',
          'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]',
          'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]',
          'e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]',
        ],
      },
      problems: () => ['appsettings.yml: Excessive alias count indicates a resource exhaustion attack'],
    },
    {
      name: 'a list instead of a map at the root',
      files: { 'appsettings.yml': ['- Servers'] },
      problems: () => ['appsettings.yml: (root): expected a map of settings, got a list'],
    },
  ];

const malformed = tempSuite('config/load :: malformed configs', { prefix: 'wd-config-bad-' });

/** Lays out a case's folders and files in `dir`. */
async function writeCase(dir: string, c: (typeof CASES)[number]): Promise<void> {
  for (const d of c.dirs ?? []) await mkdir(join(dir, d));
  await writeFiles(dir, c.files);
}

for (const c of CASES) {
  malformed(`load :: ${c.name}`, async ({ dir }) => {
    await writeCase(dir, c);
    const r = await loadConfig({ cwd: dir, env: {} });
    assert.not.ok(r.ok, 'refused');
    assert.equal(r.ok ? [] : r.problems, c.problems(dir));
  });
}

/**
 * The cases run through the real daemon too: a parse error, a missing and a mistyped value, several problems at
 * once, files beside the config, the resolver's own checks, an alias bomb and a root of the wrong shape. Every case
 * is checked line for line in-process above; what this adds, the exit-2 path, is the same for all, and each
 * daemon start costs over a second of CPU through tsx.
 */
const THROUGH_THE_DAEMON = [
  'YAML syntax error → file:line:col',
  'missing ApiPort',
  'Manifest without ManifestUrl, CiServer without JobName, Local without CurrentVersion',
  'unreadable ApiTokenFile (missing, a folder, empty)',
  'duplicate ApiPort',
  'an alias bomb is refused, not expanded',
  'a list instead of a map at the root',
];

// Exit 2, exactly these lines on stderr, nothing created.
for (const c of CASES.filter((c) => THROUGH_THE_DAEMON.includes(c.name))) {
  malformed(`watchdog start :: ${c.name}`, async ({ dir }) => {
    await writeCase(dir, c);
    const before = (await readdir(dir, { recursive: true })).sort();
    const r = await runCli(['start'], { cwd: dir, timeoutMs: 30_000 });
    assert.is(r.code, 2, r.stderr);
    assert.equal(r.stderr.trimEnd().split('\n'), c.problems(dir), 'one line per problem');
    assert.equal((await readdir(dir, { recursive: true })).sort(), before, 'no folder or file created');
  });
}

malformed('watchdog start :: every case named to run through the daemon exists', () => {
  for (const name of THROUGH_THE_DAEMON)
    assert.ok(
      CASES.some((c) => c.name === name),
      name,
    );
});

malformed('load :: at least 12 distinct malformed configs are covered', () => {
  assert.ok(CASES.length >= 12, String(CASES.length));
});

malformed('load :: every problem of one config is listed at once, each naming its file', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml(
      { alpha: ['ApiPort: abc', 'TimeoutSeconds: -5', 'UpdateType: Manifest'], '"bad key"': ['ApiPort: 1'] },
      { top: ['Urls: http://localhost', 'BaseUrl: not a url', 'Bogus: 1'] },
    ),
    'appsettings.Secret.yml': serversYaml({ alpha: ['ApiToken: [42]'] }),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  const problems = r.ok ? [] : r.problems;
  const expected = [
    'appsettings.yml: Urls:',
    'appsettings.yml: BaseUrl:',
    'appsettings.yml: Bogus: unknown key',
    `${A}.ApiPort: expected an integer 1-65535, got "abc"`,
    `${A}.TimeoutSeconds:`,
    `${A}.Updates.ManifestUrl:`,
    'appsettings.yml: Servers.Instances."bad key":',
    'appsettings.Secret.yml: Servers.Instances.alpha.ApiToken: expected a token, got a list',
  ];
  for (const e of expected)
    assert.ok(
      problems.some((p) => p.startsWith(e)),
      `lists "${e}" in:\n${problems.join('\n')}`,
    );
  assert.is(problems.length, expected.length, problems.join('\n'));
});

malformed.run();
