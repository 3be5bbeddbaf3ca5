/**
 * A counterexample of the configuration fuzz suite (config.test.ts), kept as plain tests: waits too long for a
 * Node timer were accepted.
 */
import * as assert from 'uvu/assert';
import { type LoadResult, loadConfig } from '../../src/config/load.ts';
import { MAX_SECONDS } from '../../src/config/numbers.ts';
import { instanceTiming } from '../../src/supervisor/instance-chart.ts';
import { tempSuite, within } from '../_support/env.ts';
import { oneInstance, writeFiles } from '../config/_support/files.ts';

const A = 'appsettings.yml: Servers.Instances.alpha';
const TOO_LONG = `expected at most ${MAX_SECONDS} seconds (about 24 days, the longest timer)`;

const regressions = tempSuite('fuzz/config timers', { prefix: 'wd-fuzz-config-' });

const load = (dir: string): Promise<LoadResult> => within(3_000, 'loadConfig', loadConfig({ cwd: dir, env: {} }));

// Counterexample {"Servers":{"Instances":{"alpha":{"ApiPort":1,"TimeoutSeconds":"1e400"}}}}: accepted as Infinity,
// and a timer of Infinity (or of 1e10 s, past 2^31-1 ms) fires after 1 ms, so the server was killed as hung at once.
regressions('config :: seconds too long for a timer are refused with the limit, in every section', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      ['TimeoutSeconds: "1e400"', 'Updates: { DownloadTimeoutSeconds: 1e10 }'],
      ['Timing:', '  BackoffMaxSeconds: 2147484', '  RejectedCheckinLogSeconds: 1e300'],
    ),
  });
  const r = await load(dir);
  assert.equal(r, {
    ok: false,
    problems: [
      `appsettings.yml: Timing.BackoffMaxSeconds: ${TOO_LONG}, got 2147484`,
      `appsettings.yml: Timing.RejectedCheckinLogSeconds: ${TOO_LONG}, got 1e+300`,
      `${A}.Updates.DownloadTimeoutSeconds: ${TOO_LONG}, got 10000000000`,
      `${A}.TimeoutSeconds: ${TOO_LONG}, got Infinity`,
    ],
  });
});

regressions('config :: the longest wait still loads', async ({ dir }) => {
  await writeFiles(dir, {
    'appsettings.yml': oneInstance(
      [`TimeoutSeconds: ${MAX_SECONDS}`],
      ['Timing:', `  ShutdownRequestSeconds: ${MAX_SECONDS}`, `  ShutdownExitSeconds: ${MAX_SECONDS}`],
    ),
  });
  const r = await load(dir);
  if (!r.ok) return assert.unreachable(r.problems.join('\n'));
  const [alpha] = r.config.instances;
  if (!alpha) return assert.unreachable('no instance');
  const timing = instanceTiming(r.config, alpha);
  assert.is(timing.checkinTimeoutMs, MAX_SECONDS * 1000);
});

regressions.run();
