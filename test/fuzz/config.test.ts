/**
 * Fuzzing the configuration loader: whatever appsettings.yml holds (and whatever the environment adds), loadConfig
 * answers in bounded time with either a configuration the daemon can use or a list of problems that each say
 * where (the exit-2 path). Its own catch-all ("could not load the configuration: …") is for bugs, so reaching it
 * fails the property too.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import * as assert from 'uvu/assert';
import { stringify } from 'yaml';
import { type LoadResult, loadConfig } from '../../src/config/load.ts';
import { INSTANCE_KEY } from '../../src/config/schema.ts';
import { instanceTiming } from '../../src/supervisor/instance-chart.ts';
import { tempSuite, within } from '../_support/env.ts';
import { appSettingsWith, environment, yamlText } from './_support/config-arbitraries.ts';
import { fuzz } from './_support/fuzz.ts';

/** The longest delay setTimeout honours; a longer one fires after 1 ms (Node's TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2 ** 31 - 1;
const LOAD_MS = 3_000;

const config = tempSuite('fuzz/config', {
  prefix: 'wd-fuzz-config-',
  before: async ({ dir }) => {
    await writeFile(join(dir, 'token.txt'), 'file-token\n');
    await writeFile(join(dir, 'empty.txt'), '');
    await mkdir(join(dir, 'sub'));
    // A FIFO blocks whoever opens it for reading until a writer comes: a token file must never be opened blind.
    execFileSync('mkfifo', [join(dir, 'pipe.fifo')]);
  },
});

/** Where a problem line may say it comes from: the file, an environment variable, or the environment name. */
const SOURCE = /^(appsettings\.yml[:\s]|environment variable [^:]+: |WATCHDOG_ENV: )/;

/** The invariants of one outcome, whatever the input. */
function checkOutcome(r: LoadResult): void {
  // Keys such as __proto__ must never reach Object.prototype through a merge.
  assert.equal(Object.keys(Object.prototype), [], 'Object.prototype was changed');
  if (!r.ok) {
    assert.ok(r.problems.length > 0, 'a refused configuration names at least one problem');
    for (const p of r.problems) {
      assert.type(p, 'string');
      assert.not.match(p, /^could not load the configuration/, `the loader's catch-all for bugs was reached: ${p}`);
      assert.match(p, SOURCE, `a problem line says where: ${JSON.stringify(p)}`);
    }
    return;
  }
  const { config } = r;
  for (const inst of config.instances) {
    assert.match(inst.key, INSTANCE_KEY);
    const port = inst.settings.ApiPort;
    assert.ok(Number.isInteger(port) && port >= 1 && port <= 65535, `ApiPort ${port}`);
    // Every wait the machine arms, and the download timeout, must be one setTimeout can keep.
    const waits: Record<string, number> = {
      ...instanceTiming(config, inst),
      downloadTimeoutMs: inst.settings.Updates.DownloadTimeoutSeconds * 1000,
    };
    for (const [name, ms] of Object.entries(waits)) {
      assert.ok(Number.isFinite(ms) && ms >= 0 && ms <= MAX_TIMER_MS, `${inst.key}: ${name} = ${ms} ms`);
    }
  }
  for (const [name, s] of Object.entries(config.timing)) {
    assert.ok(Number.isFinite(s) && s * 1000 <= MAX_TIMER_MS, `Timing.${name} = ${s}`);
  }
}

async function loadText(dir: string, text: string, env: Record<string, string> = {}): Promise<LoadResult> {
  await writeFile(join(dir, 'appsettings.yml'), text);
  return within(LOAD_MS, 'loadConfig', loadConfig({ cwd: dir, env }));
}

config('fuzz/config :: any YAML text, mostly malformed, gives a config or problems that say where', async ({ dir }) => {
  await fuzz(
    'config/yaml-text',
    fc.asyncProperty(yamlText, async (text) => checkOutcome(await loadText(dir, text))),
    { seed: 0x5eed_c0f1, numRuns: 300 },
  );
});

config('fuzz/config :: documents shaped like appsettings.yml, mostly wrong, with the environment', async ({ dir }) => {
  await fuzz(
    'config/noisy-documents',
    fc.asyncProperty(appSettingsWith(25), environment, async (doc, env) =>
      checkOutcome(await loadText(dir, stringify(doc), env)),
    ),
    { seed: 0x5eed_c0f2, numRuns: 150 },
  );
});

config('fuzz/config :: documents shaped like appsettings.yml, mostly right, with extreme values', async ({ dir }) => {
  let loaded = 0;
  await fuzz(
    'config/near-valid-documents',
    fc.asyncProperty(appSettingsWith(1), async (doc) => {
      const r = await loadText(dir, stringify(doc));
      if (r.ok) loaded += 1;
      checkOutcome(r);
    }),
    { seed: 0x5eed_c0f3, numRuns: 200, floor: () => loaded >= 10 },
  );
  // The point of this generator is to reach the valid-config invariants; a generator drifted to all-refused would not.
  assert.ok(loaded >= 10, `only ${loaded} of the generated documents loaded`);
  if (process.env.FUZZ_REPORT) console.log(`near-valid documents that loaded: ${loaded}`);
});

/** Keys no strict section knows, among them the ones a plain JavaScript object treats specially. */
const UNKNOWN_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'Bogus'];

config(
  'fuzz/config :: an unknown key added to any section of a valid document is reported, never dropped',
  async ({ dir }) => {
    let checked = 0;
    await fuzz(
      'config/unknown-key',
      fc.asyncProperty(
        appSettingsWith(1),
        fc.constantFrom(...UNKNOWN_KEYS),
        fc.nat(),
        fc.constantFrom<unknown>(1, 'x', { A: 1 }),
        async (generated, key, where, value) => {
          // A copy to change (fast-check reuses generated values while shrinking); JSON keeps every key its own.
          const doc = JSON.parse(JSON.stringify(generated)) as Record<string, unknown>;
          const valid = await loadText(dir, stringify(doc));
          if (!valid.ok) return;
          // The strict maps of this document: the root, Servers, each instance (and its Updates), Timing, Admin, …
          const servers = doc.Servers as Record<string, unknown>;
          const instances = servers.Instances as Record<string, Record<string, unknown>>;
          const maps: Array<[string, Record<string, unknown>]> = [
            ['(root)', doc],
            ['Servers', servers],
            ['Servers.Instances', instances],
            ...Object.entries(instances).map(([k, inst]): [string, Record<string, unknown>] => [k, inst]),
          ];
          for (const name of ['Timing', 'Admin', 'Notification', 'Process', 'Data'])
            if (doc[name] !== undefined) maps.push([name, doc[name] as Record<string, unknown>]);
          const [at, map] = maps[where % maps.length] ?? ['(root)', doc];
          // Defined, not assigned: `map.__proto__ = …` would set the prototype instead of adding the key.
          Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
          const r = await loadText(dir, stringify(doc));
          checked += 1;
          assert.not.ok(r.ok, `${key} added under ${at} was accepted`);
          if (!r.ok)
            assert.ok(
              r.problems.some((p) => p.includes(key)),
              `${key} under ${at}: ${r.problems.join('\n')}`,
            );
        },
      ),
      { seed: 0x5eed_c0f4, numRuns: 100, floor: () => checked >= 10 },
    );
    assert.ok(checked >= 10, `only ${checked} valid documents were changed`);
  },
);

config.run();
