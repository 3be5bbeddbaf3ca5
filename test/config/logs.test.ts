import * as assert from 'uvu/assert';
import { tempSuite } from '../_support/env.ts';
import { checkTop } from './_support/files.ts';

const logs = tempSuite('config :: Logs and the log timings', { prefix: 'wd-cfglogs-' });

logs('logs :: bad sizes, counts and waits exit 2 with one clear line each', async ({ dir }) => {
  const r = await checkTop(
    dir,
    'bad.yml',
    ['check', '--config', 'bad.yml'],
    [
      'Logs:',
      '  ServerLogMaxBytes: 10',
      '  ServerLogFiles: 1.5',
      '  AuditLogFiles: 0',
      '  AuditLogMaxBytes: lots',
      '  Sizes: 1',
      'Timing:',
      '  LogRetrySeconds: 0',
      '  RefusedRequestLogSeconds: -1',
    ],
  );
  assert.is(r.code, 2, r.stderr);
  const expected = [
    'bad.yml: Logs.ServerLogMaxBytes: expected at least 1024 bytes, got 10',
    'bad.yml: Logs.ServerLogFiles: expected a whole number of files, got 1.5',
    'bad.yml: Logs.AuditLogFiles: expected at least 1 file, got 0',
    'bad.yml: Logs.AuditLogMaxBytes: expected a whole number of bytes, got "lots"',
    'bad.yml: Timing.LogRetrySeconds: expected a positive number of seconds, got 0',
    'bad.yml: Timing.RefusedRequestLogSeconds: expected a positive number of seconds, got -1',
  ];
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(
    expected.filter((e) => !lines.includes(e)),
    [],
    r.stderr,
  );
  assert.ok(
    lines.some((l) => l.startsWith('bad.yml: Logs.Sizes:')),
    'an unknown key is named',
  );
});

logs('logs :: the defaults pass, and good values are accepted', async ({ dir }) => {
  const r = await checkTop(
    dir,
    'appsettings.yml',
    ['check'],
    [
      'Logs:',
      '  ServerLogMaxBytes: 1048576',
      '  ServerLogFiles: 1',
      '  AuditLogMaxBytes: 1024',
      '  AuditLogFiles: 100',
      'Timing:',
      '  LogRetrySeconds: 0.05',
      '  RefusedRequestLogSeconds: 600',
    ],
  );
  assert.is(r.code, 0, r.stderr);
});

logs.run();
