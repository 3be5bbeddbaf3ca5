import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import { createAuditLog } from '../../src/http/audit.ts';
import { startHttpServer } from '../../src/http/server.ts';
import { tempDir, waitFor } from '../_support/env.ts';
import { basic, harness, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';

interface Line {
  time: string;
  key: string;
  action: string;
  user: string | null;
  remote: string | null;
  status: number;
  result: string;
  at: number;
}

const readLines = async (file: string): Promise<Line[]> =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

const audit = suite('audit');

audit('audit :: control requests over a real socket become JSON lines in logs/audit.log (folder created)', async () => {
  const tmp = await tempDir('wd-http-audit-');
  const h = harness(memoryRegistry(memoryInstance('alpha', { apiToken: 'tok:en' })));
  const file = join(tmp.path, 'work', 'logs', 'audit.log');
  const log = createAuditLog({ file, bus: h.bus });
  const server = await startHttpServer(h.app, { port: 0 });
  try {
    const post = (path: string, auth?: string) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: auth ? { authorization: auth } : {} }).then(
        (r) => r.status,
      );
    assert.is(await post('/instances/alpha/restart', basic('alpha', 'tok:en')), 200);
    assert.is(await post('/instances/alpha/stop', basic('alpha', 'guess')), 401);
    assert.is(await post('/instances/alpha/rollback'), 401);
    assert.is(await post('/instances/alpha/update', basic('eve', 'tok:en')), 403);
    assert.is(await post('/server_api/alpha/ping', basic('alpha', 'x')), 401); // a check-in, not a control request
  } finally {
    await server.close();
    await log.close();
  }
  const lines = await readLines(file);
  // The accepted one in full; of the refusals from this source, the first in full and the rest in one summary
  // (written at close, as the interval had not ended).
  assert.equal(
    lines.slice(0, 2).map((l) => [l.key, l.action, l.user, l.status, l.result]),
    [
      ['alpha', 'restart', 'alpha', 200, 'accepted'],
      ['alpha', 'stop', 'alpha', 401, 'refused'],
    ],
  );
  assert.is(lines.length, 3);
  const summary = lines[2] as unknown as { summary: string; refused: number; remote: string };
  assert.is(summary.refused, 2);
  assert.match(summary.summary, /^2 refused requests from 127\.0\.0\.1 in the last \d+ s$/);
  for (const l of lines) {
    assert.match(l.remote ?? '', /127\.0\.0\.1/);
    assert.is(new Date(l.time).getTime(), l.at);
  }
  const raw = await readFile(file, 'utf8');
  assert.not.match(raw, 'tok:en');
  assert.not.match(raw, 'guess');
  await tmp.cleanup();
});

audit('audit :: appends to an existing file and stops writing after close()', async () => {
  const tmp = await tempDir('wd-http-audit-');
  const file = join(tmp.path, 'audit.log');
  await writeFile(file, '{"earlier":true}\n');
  const bus = createBus();
  const log = createAuditLog({ file, bus });
  const event = {
    key: 'k',
    action: 'stop',
    user: 'k',
    remote: '10.0.0.1',
    status: 200,
    result: 'accepted' as const,
    at: Date.now(),
  };
  bus.emit('instance:control', event);
  await log.close();
  bus.emit('instance:control', { ...event, action: 'restart' });
  await log.close(); // idempotent
  const text = await readFile(file, 'utf8');
  const lines = text.trim().split('\n');
  assert.is(lines.length, 2);
  assert.equal(JSON.parse(lines[0] ?? ''), { earlier: true });
  assert.is((JSON.parse(lines[1] ?? '') as Line).action, 'stop');
  await tmp.cleanup();
});

audit('audit :: a file that cannot be written is reported, and the bus keeps working', async () => {
  const tmp = await tempDir('wd-http-audit-');
  const file = join(tmp.path, 'audit.log');
  await mkdir(file); // a folder where the file should be
  const bus = createBus();
  const logger = recordingLogger('audit');
  const log = createAuditLog({ file, bus, log: logger });
  let delivered = 0;
  bus.on('instance:control', () => delivered++);
  const event = {
    key: 'k',
    action: 'stop',
    user: 'k',
    remote: undefined,
    status: 200,
    result: 'accepted' as const,
    at: Date.now(),
  };
  bus.emit('instance:control', event);
  await waitFor('the write failure to be logged', () =>
    logger.lines.some((l) => l.includes('cannot write the audit log')),
  );
  bus.emit('instance:control', event);
  assert.is(delivered, 2);
  await log.close();
  await tmp.cleanup();
});

audit.run();
