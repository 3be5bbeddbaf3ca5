import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../_support/env.ts';

/**
 * The soak for 60 seconds with a fixed seed, run as `npm run soak` runs it, as a child process
 * (bench/ is not imported from test/): the real daemon, 30 real servers, every fault kind, every invariant. It
 * must pass with no violation and have injected each kind it implements at least once.
 */

const SEED = 15001;
const SECONDS = 60;
/** The run's own end, its daemon's shutdown and set-up take about 70 s; past this the child is killed. */
const LIMIT_MS = 150_000;

interface SoakResult {
  seed: number;
  faults: Record<string, number>;
  /** Fault kinds this machine cannot inject (no tmpfs mount), with why. */
  skipped?: Record<string, string>;
  checks: Record<string, number>;
  violations: number;
  /** /metrics scrapes where an idle reference process lagged too (the machine starved): not lag checks. */
  lagDisturbed: number;
}

function runSoak(): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'bench/soak/run.ts'), '--seconds', String(SECONDS), '--seed', String(SEED)],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const take = (d: Buffer) => {
      out += d.toString('utf8');
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    // SIGINT lets the soak sweep its daemon and servers; the run's own loops end at SECONDS anyway.
    const timer = setTimeout(() => child.kill('SIGINT'), LIMIT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

test(`soak :: a ${SECONDS} s soak (seed ${SEED}) passes with every fault kind injected`, async () => {
  const { code, out } = await runSoak();
  const line = out.split('\n').find((l) => l.startsWith('SOAK_RESULT '));
  assert.ok(line, `the soak printed no result:\n${out.slice(-4000)}`);
  const result = JSON.parse(line.slice('SOAK_RESULT '.length)) as SoakResult;
  const violations = out.split('\n').filter((l) => l.includes('VIOLATION'));
  assert.is(result.violations, 0, `violations (reproduce with --seed ${SEED}):\n${violations.join('\n')}`);
  assert.is(code, 0, out.slice(-4000));
  assert.is(result.seed, SEED);
  const skipped = result.skipped ?? {};
  // Said, not hidden: a kind the machine cannot inject (disk-full needs a tmpfs mount) is named with its reason.
  for (const [kind, why] of Object.entries(skipped)) console.log(`soak: fault kind ${kind} SKIPPED here: ${why}`);
  const missing = Object.entries(result.faults)
    .filter(([kind, n]) => n === 0 && !(kind in skipped))
    .map(([kind]) => kind);
  assert.equal(missing, [], 'every fault kind the soak implements was injected');
  assert.ok(Object.keys(result.faults).length >= 20, 'the fault kinds are all listed');
  // RSS is compared only in runs of 2 minutes or more; on a busy machine every lag scrape may be disturbed.
  const lagSeen = (result.checks['loop-lag-p99'] ?? 0) + result.lagDisturbed > 0;
  const unchecked = Object.entries(result.checks)
    .filter(([name, n]) => n === 0 && name !== 'rss-stable' && !(name === 'loop-lag-p99' && lagSeen))
    .map(([name]) => name);
  assert.equal(unchecked, [], 'every invariant was checked');
});

test.run();
