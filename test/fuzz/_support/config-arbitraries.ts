/**
 * Generators for the configuration fuzz suite: YAML text (mostly broken) and documents shaped like appsettings.yml
 * whose values are sometimes right and sometimes anything (wrong types, unknown or odd keys, huge numbers, odd
 * strings), so the loader's checks beyond YAML syntax (binding, schema, cross-field rules, token files) all run.
 */
import fc from 'fast-check';
import { binaryString } from './fuzz.ts';

/** Files the generated paths may name, made in the suite's working folder (a FIFO among them: reading one blocks). */
export const SECRET_PATHS = ['token.txt', 'empty.txt', 'missing.txt', 'pipe.fifo', '.', 'sub', '/dev/null', ''];

const ODD_STRINGS = [
  '',
  ' ',
  '~',
  'null',
  'yes',
  'TRUE',
  ' 90 ',
  '1e400',
  '-1e400',
  '1e10',
  '4e9',
  '2147484',
  '0x1F',
  '.inf',
  'NaN',
  '0123',
  'Jenkins',
  'jenkins',
  'MANIFEST',
  'Systemd',
  'Verbose',
  'warning',
  'http://localhost:5000',
  'http://127.0.0.1:0',
  'http://*:0;http://[::1]:0',
  'https://x:1',
  'http://localhost:99999',
  'ftp://x',
  '__proto__',
  'constructor',
  'a:b:c',
  '../../../etc/passwd',
  '\u0000',
  '\n\t',
  'é🙂\u202e',
  'x'.repeat(300),
];

const ODD_NUMBERS = [0, -0, -1, 1, 1212, 65535, 65536, 2 ** 31, 2 ** 53 + 2, 1e10, 1e300, 0.5, 1e-9, -1e300];

const scalar: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...ODD_STRINGS),
  fc.constantFrom(...ODD_NUMBERS),
  fc.string({ maxLength: 12 }),
  binaryString({ maxLength: 8 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
);

/** Keys of every section, as the schema spells them, and spellings it must also take or must refuse. */
const KNOWN_KEYS = [
  'Urls',
  'BaseUrl',
  'Servers',
  'Instances',
  'InstanceRoot',
  'ApiPort',
  'ApiToken',
  'ApiTokenFile',
  'UpdateType',
  'Updates',
  'TimeoutSeconds',
  'Timing',
  'Admin',
  'Username',
  'Password',
  'PasswordFile',
  'Serilog',
  'MinimumLevel',
  'Override',
  'Default',
  'Notification',
  'ChatWebhook',
  'DiscordWebhook',
  'Process',
  'PersistServers',
  'Mode',
  'Data',
  'File',
  'Arguments',
  'EnvironmentVariables',
  'Kestrel',
  'Logging',
];

export const key: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...KNOWN_KEYS).chain((k) => fc.mixedCase(fc.constant(k))),
  fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '0', '1', 'a b', 'a.b', 'é', '-'),
  fc.string({ maxLength: 10 }),
);

/** Anything a YAML document can hold: scalars, lists and maps, a few levels deep. */
export const anyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }),
  ),
})).value;

/**
 * Documents shaped like appsettings.yml. `noise` is how often (in a hundred) a field holds anything at all instead of
 * a valid value, or a section gains unknown keys: high, nearly every document is refused somewhere; low, many load,
 * and then the extreme but well-typed values (huge or tiny seconds, ports at the edges) reach the checks after the
 * schema.
 */
export function appSettingsWith(noise: number): fc.Arbitrary<Record<string, unknown>> {
  const field = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
    fc.oneof({ weight: 100 - noise, arbitrary: good }, { weight: noise, arbitrary: anyValue });
  /** A map of the given fields (each present or not), sometimes with unknown keys beside them. */
  const section = (fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> =>
    fc
      .tuple(
        fc.record(fields, { requiredKeys: [] }),
        fc.oneof(
          { weight: 100 - noise, arbitrary: fc.constant({}) },
          { weight: noise, arbitrary: fc.dictionary(key, anyValue, { minKeys: 1, maxKeys: 2 }) },
        ),
      )
      .map(([known, extra]) => ({ ...extra, ...known }));
  /** Mostly valid (up to the longest timer, 2147483 s), sometimes past it (even Infinity), written as text or number. */
  const seconds = field(
    fc.oneof(
      { weight: 30, arbitrary: fc.double({ min: 0.001, max: 2_147_483, noNaN: true }) },
      { weight: 30, arbitrary: fc.constantFrom(0.001, 0.5, 1, 90, 2_147_483, '90', ' 2.5 ', '2147483') },
      { weight: 1, arbitrary: fc.constantFrom(2_147_484, 1e10, 1e300, '1e400', '4e9', 2 ** 53 + 2) },
    ),
  );
  const secretPath = field(
    fc.oneof({ weight: 100 - noise, arbitrary: fc.constant('token.txt') }, fc.constantFrom(...SECRET_PATHS)),
  );
  const text = (max: number) => fc.string({ minLength: 1, maxLength: max });

  const instance = section({
    Name: field(text(8)),
    ApiPort: field(fc.oneof(fc.integer({ min: 1, max: 65535 }), fc.constantFrom(1, 65535, '1212', ' 80 '))),
    ApiToken: field(text(8)),
    ApiTokenFile: secretPath,
    UpdateType: field(fc.constantFrom('Dummy', 'dummy', 'DUMMY', 'Manifest', 'Jenkins')),
    Updates: field(
      section({
        ManifestUrl: field(fc.constant('http://127.0.0.1:1/manifest.json')),
        BaseUrl: field(text(8)),
        JobName: field(text(8)),
        CurrentVersion: field(text(8)),
        DownloadTimeoutSeconds: seconds,
        Authentication: field(section({ Username: field(fc.string()), Password: field(fc.string()) })),
      }),
    ),
    TimeoutSeconds: seconds,
    DumpOnTimeout: field(fc.oneof(fc.boolean(), fc.constantFrom('true', 'False'))),
    TimeoutDumpType: field(fc.constantFrom('Normal', 'full', 'withheap')),
    RunCommand: field(text(8)),
    Arguments: field(fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 })),
    EnvironmentVariables: field(fc.dictionary(key, fc.string({ maxLength: 6 }), { maxKeys: 3 })),
  });

  const instanceKey = fc.oneof(
    { weight: 100 - noise, arbitrary: fc.constantFrom('alpha', 'beta', 'a.b-c_d', '0') },
    { weight: noise, arbitrary: fc.constantFrom('Alpha', '-x', 'a b', '__proto__', 'constructor', 'x'.repeat(65)) },
    { weight: noise, arbitrary: fc.string({ maxLength: 8 }) },
  );

  const servers = fc.oneof(
    {
      weight: 100 - noise,
      arbitrary: fc.record(
        {
          InstanceRoot: field(fc.constantFrom('instances', '/tmp/x')),
          Instances: fc.dictionary(instanceKey, instance, { minKeys: 1, maxKeys: 3 }),
        },
        { requiredKeys: ['Instances'] },
      ),
    },
    { weight: noise, arbitrary: anyValue },
  );
  const rest = section({
    Urls: field(
      fc.constantFrom('http://localhost:5000', 'http://127.0.0.1:0', 'http://*:5000', 'http://+:1;http://[::1]:2/'),
    ),
    BaseUrl: field(fc.constantFrom('http://example.com/', 'https://example.com/watchdog')),
    Timing: field(
      section({
        ShutdownRequestSeconds: seconds,
        ShutdownExitSeconds: seconds,
        BackoffInitialSeconds: seconds,
        BackoffMaxSeconds: seconds,
        StableRunSeconds: seconds,
        StartupFailureLimit: field(fc.integer({ min: 1, max: 10 })),
        WebhookRetries: field(fc.integer({ min: 0, max: 10 })),
        WebhookRetryBaseSeconds: seconds,
        WebhookTimeoutSeconds: seconds,
        DumpTimeoutSeconds: seconds,
        RejectedCheckinLogSeconds: seconds,
      }),
    ),
    Admin: field(
      fc.oneof(
        fc.record({ Username: field(text(6)), Password: field(fc.string({ maxLength: 6 })) }),
        fc.record({ Username: field(text(6)), PasswordFile: secretPath }),
      ),
    ),
    Serilog: field(
      section({
        MinimumLevel: field(
          fc.oneof(
            fc.constantFrom('Debug', 'information', 'FATAL'),
            section({
              Default: field(fc.constantFrom('Error', 'verbose')),
              Override: field(
                fc.dictionary(
                  fc.constantFrom('watchdog.http', 'Microsoft', 'audit'),
                  fc.constantFrom('Debug', 'Error'),
                ),
              ),
            }),
          ),
        ),
      }),
    ),
    Notification: field(section({ ChatWebhook: field(fc.constant('http://127.0.0.1:1/hook')) })),
    Process: field(section({ PersistServers: field(fc.boolean()), Mode: field(fc.constantFrom('Basic', 'systemd')) })),
    Data: field(section({ File: field(fc.constantFrom('data.db', 'x/y.db')) })),
  });
  return fc.tuple(rest, servers).map(([settings, s]) => ({ ...settings, Servers: s }));
}

const YAML_PIECES = [
  'Servers:',
  '  Instances:',
  '    alpha:',
  '      ApiPort: 1212',
  'Urls: ',
  ': ',
  '- ',
  '? ',
  '&a ',
  '*a',
  '<<: *a',
  '!!str ',
  '!!binary ',
  '!!int ',
  '!custom ',
  '{',
  '}',
  '[',
  ']',
  ',',
  '"',
  "'",
  '\\',
  '#',
  '|',
  '>-',
  '---',
  '...',
  '%YAML 1.2',
  '%TAG ! tag:x,2000:',
  '~',
  '1e400',
  '0x1F',
  '.nan',
  '\t',
  '  ',
  '\n',
  '\r\n',
  '\u0000',
  '\ufeff',
  '@',
  '`',
];

/** YAML-looking text, mostly malformed: pieces of YAML syntax, indentation and junk in any order. */
export const yamlText: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(fc.oneof(fc.constantFrom(...YAML_PIECES), fc.string({ maxLength: 6 })), { maxLength: 40 })
    .map((parts) => parts.join('')),
  binaryString({ maxLength: 200 }),
);

/** Environment variables in the .NET form, some aimed at real settings, plus the environment name. */
export const environment: fc.Arbitrary<Record<string, string>> = fc
  .tuple(
    fc.dictionary(
      fc.oneof(
        fc.constantFrom(
          'Servers__Instances__alpha__ApiPort',
          'Servers__Instances__alpha__Arguments__0',
          'Servers__Instances__ALPHA__TimeoutSeconds',
          'Timing__BackoffMaxSeconds',
          'Notification__DiscordWebhook',
          'ASPNETCORE_URLS',
          'Servers____x',
          'servers__instances',
        ),
        fc.string({ maxLength: 10 }),
      ),
      fc.oneof(fc.constantFrom(...ODD_STRINGS), fc.string({ maxLength: 8 })),
      { maxKeys: 3 },
    ),
    fc.option(fc.constantFrom('Staging', 'Production', '../../x', ' ', 'a b'), { nil: undefined }),
  )
  .map(([vars, env]) => (env === undefined ? vars : { ...vars, WATCHDOG_ENV: env }));
