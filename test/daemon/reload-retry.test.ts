/**
 * A reload refused only because the configuration files could not be read for want of descriptors (EMFILE while
 * idle connections or a flood hold them) is tried again with the launch back-off until it goes through; a reload
 * refused for what the files say is not.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config/load.ts';
import type { ResolvedConfig } from '../../src/config/resolved.ts';
import { reloadRetryMs, startConfigReload, starvedOnly } from '../../src/daemon/reload.ts';
import { tempSuite, waitFor } from '../_support/env.ts';
import { recordingLogger } from '../_support/recording-logger.ts';

const test = tempSuite('daemon :: a reload refused for want of descriptors is tried again');

const STARVED = 'appsettings.yml: cannot read the file (EMFILE); check that it is a readable file';

async function configIn(dir: string, backoff: string): Promise<ResolvedConfig> {
  const file = join(dir, 'appsettings.yml');
  await writeFile(
    file,
    `Urls: http://127.0.0.1:0\nTiming:\n  ${backoff}\nServers:\n  Instances:\n    a:\n      ApiPort: 40001\n      RunCommand: /bin/true\n`,
  );
  const loaded = await loadConfig({ cwd: dir, env: {} });
  if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
  return loaded.config;
}

test("reload-retry :: only problems of the daemon's own resources count, and the retries back off to the cap", async ({
  dir,
}) => {
  assert.ok(starvedOnly([STARVED, STARVED.replace('EMFILE', 'ENFILE')]));
  assert.not.ok(starvedOnly([]));
  assert.not.ok(starvedOnly([STARVED, 'Servers.Instances.a.ApiPort: expected a port']));
  const { timing } = await configIn(dir, 'BackoffInitialSeconds: 1\n  BackoffMaxSeconds: 5');
  assert.equal(
    [0, 1, 2, 3, 4].map((n) => reloadRetryMs(timing, n)),
    [1000, 2000, 4000, 5000, 5000],
  );
});

test('reload-retry :: SIGHUP while starved: refused twice, then applied without another signal', async ({ dir }) => {
  const initial = await configIn(dir, 'BackoffInitialSeconds: 0.05\n  BackoffMaxSeconds: 0.1');
  const next = await configIn(dir, 'BackoffInitialSeconds: 0.05\n  BackoffMaxSeconds: 0.2');
  let loads = 0;
  const applied: ResolvedConfig[] = [];
  const log = recordingLogger();
  const reload = startConfigReload({
    mainFile: join(dir, 'appsettings.yml'),
    initial,
    log,
    load: async () => (++loads <= 2 ? { ok: false, problems: [STARVED] } : { ok: true, config: next, warnings: [] }),
    apply: async (c) => {
      applied.push(c);
      return { added: [], removed: [], updated: [], failed: [] };
    },
  });
  try {
    process.emit('SIGHUP');
    await waitFor('the reload applied', () => applied.length === 1 || undefined, 10_000);
    assert.is(loads, 3);
    assert.is(reload.current().timing.BackoffMaxSeconds, 0.2);
    const retries = log.lines.filter((l) => l.msg.includes('reloading again in')).map((l) => l.msg);
    assert.is(retries.length, 2, retries.join('\n'));
  } finally {
    reload.stop();
  }
});

test('reload-retry :: a reload refused for what the files say is not tried again', async ({ dir }) => {
  const initial = await configIn(dir, 'BackoffInitialSeconds: 0.05\n  BackoffMaxSeconds: 0.1');
  let loads = 0;
  const log = recordingLogger();
  const reload = startConfigReload({
    mainFile: join(dir, 'appsettings.yml'),
    initial,
    log,
    load: async () => {
      loads += 1;
      return { ok: false, problems: ['Servers.Instances.a.ApiPort: expected a port'] };
    },
    apply: async () => ({ added: [], removed: [], updated: [], failed: [] }),
  });
  try {
    process.emit('SIGHUP');
    await waitFor('the refusal', () => log.lines.some((l) => l.msg.includes('refused')) || undefined, 10_000);
    // Whether to try again is decided as the refused reload settles, and a retry is announced before it is set:
    // a turn after the refusal, the decision has been made.
    await new Promise((r) => setImmediate(r));
    assert.equal(
      log.lines.filter((l) => l.msg.includes('reloading again')).map((l) => l.msg),
      [],
      'no retry was set',
    );
    assert.is(loads, 1);
  } finally {
    reload.stop();
  }
});

test.run();
