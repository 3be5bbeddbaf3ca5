import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import { tempSuite } from '../_support/env.ts';
import { oneInstance, writeFiles } from './_support/files.ts';

const test = tempSuite('config :: Connections', { prefix: 'wd-conn-config-' });

test('connections :: defaults, and every key as set', async ({ dir }) => {
  await writeFiles(dir, { 'appsettings.yml': oneInstance() });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.ok(r.ok, r.ok ? '' : r.problems.join('\n'));
  assert.equal(r.ok && r.config.settings.Connections, {
    HeadersTimeoutSeconds: 10,
    RequestTimeoutSeconds: 60,
    KeepAliveTimeoutSeconds: 20,
  });
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      [],
      [
        'Connections:',
        '  MaxConnections: 300',
        '  MaxConnectionsPerSource: 40',
        '  HeadersTimeoutSeconds: 0.5',
        '  RequestTimeoutSeconds: 2',
        '  KeepAliveTimeoutSeconds: 16',
      ],
    ),
  });
  const set = await loadConfig({ cwd: dir, env: {} });
  assert.equal(set.ok && set.config.settings.Connections, {
    MaxConnections: 300,
    MaxConnectionsPerSource: 40,
    HeadersTimeoutSeconds: 0.5,
    RequestTimeoutSeconds: 2,
    KeepAliveTimeoutSeconds: 16,
  });
});

test('connections :: bad values are named with their key path, all at once', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      [],
      ['Connections:', '  MaxConnections: 0', '  HeadersTimeoutSeconds: -1', '  Backlog: 5'],
    ),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  const problems = r.ok ? [] : r.problems;
  assert.ok(
    problems.some((p) => p.includes('Connections.MaxConnections: expected at least 1 connection')),
    problems.join('\n'),
  );
  assert.ok(problems.some((p) => p.includes('Connections.HeadersTimeoutSeconds: expected a positive number')));
  assert.ok(
    problems.some((p) => p.includes('Connections.Backlog')),
    'an unknown key is a typo, not ignored',
  );
});

test('connections :: a per-source cap above the total, or headers allowed longer than the request, is refused', async ({
  dir,
}) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      [],
      [
        'Connections:',
        '  MaxConnections: 10',
        '  MaxConnectionsPerSource: 20',
        '  HeadersTimeoutSeconds: 30',
        '  RequestTimeoutSeconds: 5',
      ],
    ),
  });
  const r = await loadConfig({ cwd: dir, env: {} });
  assert.equal(r.ok ? [] : r.problems, [
    'appsettings.yml: Connections.MaxConnectionsPerSource: expected at most Connections.MaxConnections (10), got 20',
    'appsettings.yml: Connections.HeadersTimeoutSeconds: expected at most Connections.RequestTimeoutSeconds (5), got 30',
  ]);
});

test.run();
