/** The Agones keys, when Agones mode is on, and its one-instance rule, through the real config loader. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { tempSuite } from '../_support/env.ts';

const test = tempSuite('agones: configuration', { prefix: 'wd-agones-config-' });

const yaml = (agones: string[], keys = ['a']) =>
  [
    ...(agones.length ? ['Agones:', ...agones.map((l) => `  ${l}`)] : []),
    'Servers:',
    '  Instances:',
    ...keys.flatMap((k, i) => [`    ${k}:`, `      ApiPort: ${1300 + i}`, '      ApiToken: t']),
  ].join('\n');

async function load(dir: string, text: string, env: Record<string, string> = {}) {
  await writeFile(join(dir, 'appsettings.yml'), text);
  return loadConfig({ cwd: dir, env });
}

test('config :: off by default; on with Enabled: true (defaults filled in), or with AGONES_SDK_HTTP_PORT', async ({
  dir,
}) => {
  const off = await load(dir, yaml([]));
  assert.ok(off.ok && off.config.agones === null);
  const on = await load(dir, yaml(['Enabled: true']));
  assert.ok(on.ok);
  assert.equal(on.config.agones, { healthSeconds: 2, port: 9358, playersSeconds: 5, crashLoopLimit: 5 });
  const byEnv = await load(dir, yaml(['HealthSeconds: 0.5']), { AGONES_SDK_HTTP_PORT: '9400' });
  assert.ok(byEnv.ok);
  assert.equal(byEnv.config.agones, { healthSeconds: 0.5, port: 9400, playersSeconds: 5, crashLoopLimit: 5 });
  const port = await load(dir, yaml(['Port: 9500']), { AGONES_SDK_HTTP_PORT: '9400' });
  assert.is(port.ok && port.config.agones?.port, 9500, 'Agones.Port wins over the variable');
  const limit = await load(dir, yaml(['Enabled: true', 'CrashLoopLimit: 8']));
  assert.is(limit.ok && limit.config.agones?.crashLoopLimit, 8);
});

test('config :: Enabled: false wins over AGONES_SDK_HTTP_PORT, and then two instances are fine', async ({ dir }) => {
  const r = await load(dir, yaml(['Enabled: false'], ['a', 'b']), { AGONES_SDK_HTTP_PORT: '9358' });
  assert.ok(r.ok && r.config.agones === null);
});

test('config :: every problem at once, with its key path: two instances, a bad interval, an unknown key', async ({
  dir,
}) => {
  const r = await load(
    dir,
    yaml(['Enabled: true', 'HealthSeconds: 0', 'Helth: 2', 'Port: 70000', 'CrashLoopLimit: 1'], ['a', 'b']),
  );
  assert.ok(!r.ok);
  const text = r.problems.join('\n');
  assert.match(
    text,
    /appsettings\.yml: Servers\.Instances: expected exactly one instance in Agones mode \(Agones\.Enabled is true; a GameServer pod wraps one server\), got 2/,
  );
  assert.match(text, /Agones\.HealthSeconds: expected a positive number of seconds, got 0/);
  assert.match(text, /Agones\.Port: expected an integer 1-65535, got 70000/);
  assert.match(
    text,
    /Agones\.CrashLoopLimit: expected at least 2 \(a single crash and relaunch must keep the GameServer Healthy\), got 1/,
  );
  assert.match(text, /Agones\.Helth/);
});

test('config :: the variable names itself as the reason; Agones__Enabled from the environment counts too', async ({
  dir,
}) => {
  const env = await load(dir, yaml([], ['a', 'b']), { AGONES_SDK_HTTP_PORT: '9358' });
  assert.ok(!env.ok);
  assert.match(env.problems.join('\n'), /AGONES_SDK_HTTP_PORT is set/);
  const dotnet = await load(dir, yaml([], ['a', 'b']), { Agones__Enabled: 'true' });
  assert.ok(!dotnet.ok);
  assert.match(dotnet.problems.join('\n'), /exactly one instance in Agones mode/);
});

test.run();
