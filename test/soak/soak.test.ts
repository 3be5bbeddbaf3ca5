import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../_support/env.ts';

/**
 * The soak's smoke (`npm run soak -- --smoke`), run as a child process (bench/ is not imported from test/): the real
 * daemon and the soak's checks on five real servers, through a scripted crash, a hang left to the daemon, and a
 * daemon SIGKILL and restart. It must pass with no violation, inject every fault it planned and check every
 * invariant it names. The 60-second and longer soaks, with every fault kind, are `npm run soak` (bench/SOAK.md).
 */

const SEED = 15001;
/** The smoke's own deadline: its script gives up past it (and the test fails on what it did not do). */
const DEADLINE_S = 40;
/** Past this the child is interrupted (it sweeps its daemon and servers): only a hung run gets there. */
const LIMIT_MS = 90_000;

/** Faults and invariants the smoke must cover whatever it names: a smoke naming fewer would prove less. */
const MUST_INJECT = ['sigkill-server', 'sigstop-hang', 'daemon-kill-no-persist'];
const MUST_CHECK = [
  'no-orphan',
  'one-server-per-instance',
  'relaunch-within-bound',
  'hang-killed-within-bound',
  'nothing-left-after-sigterm',
  'daemon-alive',
];

interface SoakResult {
  mode: string;
  seed: number;
  planned: string[];
  invariants: string[];
  faults: Record<string, number>;
  checks: Record<string, number>;
  violations: number;
}

function runSmoke(): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, 'bench/soak/run.ts'),
        '--smoke',
        '--seconds',
        String(DEADLINE_S),
        '--seed',
        String(SEED),
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const take = (d: Buffer) => {
      out += d.toString('utf8');
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    // SIGINT lets the soak sweep its daemon and servers.
    const timer = setTimeout(() => child.kill('SIGINT'), LIMIT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

test(`soak :: the smoke (seed ${SEED}) passes through a crash, a hang and a daemon restart`, async () => {
  const { code, out } = await runSmoke();
  const line = out.split('\n').find((l) => l.startsWith('SOAK_RESULT '));
  assert.ok(line, `the smoke printed no result:\n${out.slice(-4000)}`);
  const result = JSON.parse(line.slice('SOAK_RESULT '.length)) as SoakResult;
  const violations = out.split('\n').filter((l) => l.includes('VIOLATION'));
  assert.is(result.violations, 0, `violations (reproduce with --smoke --seed ${SEED}):\n${violations.join('\n')}`);
  assert.is(code, 0, out.slice(-4000));
  assert.is(result.mode, 'smoke');
  assert.is(result.seed, SEED);
  for (const kind of MUST_INJECT) assert.ok(result.planned.includes(kind), `the smoke plans ${kind}`);
  for (const inv of MUST_CHECK) assert.ok(result.invariants.includes(inv), `the smoke names ${inv}`);
  const missing = result.planned.filter((kind) => !((result.faults[kind] ?? 0) > 0));
  assert.equal(missing, [], `every fault the smoke planned was injected:\n${out.slice(-4000)}`);
  const unchecked = result.invariants.filter((inv) => !((result.checks[inv] ?? 0) > 0));
  assert.equal(unchecked, [], `every invariant the smoke names was checked:\n${out.slice(-4000)}`);
});

test.run();
