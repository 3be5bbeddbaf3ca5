/**
 * A counterexample of the configuration fuzz suite (config.test.ts, "an unknown key … is reported, never dropped"),
 * kept as a plain test: `__proto__: 1` added at the root of a valid appsettings.yml was accepted. Assigning that key
 * replaced the object's prototype, so it vanished without the unknown-key problem any other key gets; and valibot's
 * records skip `__proto__`, `prototype` and `constructor`, so an instance (or environment variable) of those names
 * vanished from the configuration too.
 */
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { tempSuite } from '../_support/env.ts';
import { serversYaml, writeFiles } from '../config/_support/files.ts';

const reserved = tempSuite('fuzz/config reserved keys', { prefix: 'wd-fuzz-config-' });

reserved('config :: __proto__, prototype and constructor are reported wherever they are written', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': serversYaml(
      {
        alpha: ['ApiPort: 1213', 'EnvironmentVariables: { constructor: a, B: b }', '__proto__: { Bogus: 1 }'],
        constructor: ['ApiPort: 1214'],
        // Computed: a literal `__proto__:` in an object literal would set its prototype instead.
        ['__proto__']: ['ApiPort: 1212'],
      },
      { top: ['__proto__: 1'] },
    ),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  const reservedName = 'a name other than __proto__, prototype or constructor (JavaScript reserves them)';
  assert.equal(r, {
    ok: false,
    problems: [
      'appsettings.yml: Servers.Instances.alpha.__proto__: unknown key (expected one of Name, ApiToken, ApiTokenFile, ApiPort, UpdateType, Updates, TimeoutSeconds, DumpOnTimeout, TimeoutDumpType, RunCommand, Arguments, EnvironmentVariables, Maintenance, Backups, Retention, Console, Hub, Files, MemoryLimitMB, Limits)',
      'appsettings.yml: __proto__: unknown key (expected one of BaseUrl, Urls, TrustedProxies, AllowedHosts, Kestrel, Logging, Serilog, Data, Notification, Users, Process, Admin, Timing, Logs, Connections, Agones, Disk, Answers, Servers)',
      `appsettings.yml: Servers.Instances.alpha.EnvironmentVariables.constructor: expected ${reservedName}, got "a"`,
      `appsettings.yml: Servers.Instances.constructor: expected an instance id: ${reservedName}, got a map`,
      `appsettings.yml: Servers.Instances.__proto__: expected an instance id: ${reservedName}, got a map`,
    ],
  });
  assert.equal(Object.keys(Object.prototype), [], 'nothing reached Object.prototype');
});

reserved('config :: the same keys from the environment never reach Object.prototype', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': serversYaml({ alpha: ['ApiPort: 1213'] }) });
  const r = await loadConfig({
    cwd: dir,
    env: { Servers__Instances__constructor__ApiPort: '1214', Servers__Instances__alpha__Name: 'Alpha' },
  });
  assert.equal(r.ok ? [] : r.problems, [
    `environment variable Servers__Instances__constructor__ApiPort: Servers.Instances.constructor: expected an instance id: a name other than __proto__, prototype or constructor (JavaScript reserves them), got a map`,
  ]);
  assert.equal(Object.keys(Object.prototype), []);
});

reserved.run();
