/**
 * `npm run soak [-- --minutes N | --seconds N] [--seed S] [--out FILE]`: the real daemon with 30 instances of
 * real servers, faults injected at random (seeded) moments, invariants checked all along; any violation fails the
 * run (exit 1) and prints the seed. `--smoke`: the short scripted run on five servers that `npm test` runs
 * (smoke.ts). bench/README.md ("Soak") describes it.
 */
import { randomInt } from 'node:crypto';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH, tempDir } from '../lib/env.ts';
import { signal } from '../lib/proc.ts';
import { parseSoakArgs } from './args.ts';
import type { SoakContext } from './context.ts';
import { liveDaemons } from './daemon.ts';
import { secondDaemons } from './faults-second-daemon.ts';
import { startLagReference } from './lag-reference.ts';
import { chatBounded, daemonLoop, faultLoop, watchLoop } from './loops.ts';
import { LOOP_KINDS, makePlan } from './plan.ts';
import { seededRng } from './prng.ts';
import { scanOurs } from './procscan.ts';
import { type Figures, summary, writeReport } from './report.ts';
import { FULL, SMOKE, setUp } from './setup.ts';
import type { SmallFs } from './smallfs.ts';
import { SMOKE_FAULTS, SMOKE_INVARIANTS, smokeScript } from './smoke.ts';
import { check, type FaultKind, INVARIANTS, type Invariant, newTrack, type SoakState } from './state.ts';
import { startDaemon, stopDaemon } from './world.ts';

const args = parseSoakArgs(process.argv.slice(2), () => randomInt(1, 2 ** 31 - 1));
const reproduce = `npm run soak -- ${args.smoke ? '--smoke ' : ''}--seconds ${Math.round(args.durationMs / 1000)} --seed ${args.seed}`;
console.log(
  `soak: ${args.smoke ? 'smoke, ' : ''}seed ${args.seed}, ${Math.round(args.durationMs / 1000)} s${args.smoke ? ' at most' : ''} (reproduce: ${reproduce})`,
);

const rng = seededRng(args.seed);
const run = `r${args.seed}-${process.pid}`;
const tmp = await tempDir('wd-soak-');
const s: SoakState = {
  startedAt: Date.now(),
  run,
  dir: tmp.path,
  tracks: new Map(),
  hangs: [],
  daemonReadyAt: null,
  settled: null,
  statusAt: null,
  daemonPersists: false,
  daemonPid: null,
  starvedUntil: 0,
  daemonUrl: '',
  faults: new Map(),
  checks: new Map(),
  violations: [],
  relaunchMs: [],
  relaunchExcessMs: [],
  hangKillMs: [],
  rss: [],
  lagP99: [],
  lagMaxMs: [],
  statusMs: [],
  orphanChildren: new Map(),
  binSwapWindows: 0,
  skipped: new Map(),
  log: (line) => console.log(`[soak +${((Date.now() - s.startedAt) / 1000).toFixed(1)} s] ${line}`),
};
const timers = new Set<NodeJS.Timeout>();
const ctx: SoakContext = {
  s,
  rng,
  busy: new Set(),
  recovering: new Map(),
  later: (ms, fn) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      void fn();
    }, ms);
    timers.add(timer);
  },
};

/** Kills whatever of ours is still alive, by process group (each server leads its own), then by pid. */
function sweep(): number {
  const left = scanOurs(run);
  for (const p of left) {
    for (const target of [-p.pid, p.pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // Not a group leader, or gone already.
      }
    }
  }
  return left.length;
}

// Interrupted (Ctrl-C, or the test's time limit): nothing of ours may outlive the soak.
let smallFs: SmallFs | null = null;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    // By what was spawned, not s.daemonPid: a daemon still starting (a restart under way) is not known there yet.
    for (const pid of [...liveDaemons, ...secondDaemons]) signal(pid, 'SIGKILL');
    sweep();
    try {
      smallFs?.unmount();
    } catch (err) {
      console.log(`soak: could not unmount ${smallFs?.path}: ${(err as Error).message}`);
    }
    console.log(`soak: interrupted by ${sig}, seed ${args.seed} (reproduce: ${reproduce}); kept ${tmp.path}`);
    process.exit(1);
  });
}
const setup = await setUp(tmp.path, run, args.durationMs + 5 * 60_000, args.smoke ? SMOKE : FULL);
smallFs = setup.fs;
if (setup.fsSkipped !== null && !args.smoke) {
  s.skipped.set('disk-full', setup.fsSkipped);
  console.log(`soak: SKIPPED fault kind disk-full: ${setup.fsSkipped}`);
}
const reference = startLagReference();
let exitCode = 1;
try {
  // Configured before any daemon ran: the daemon's settling covers their first launches (configuredAt only excuses
  // an instance a reload adds later, which would otherwise excuse a crash in the first seconds of the run).
  for (const i of setup.world.config.instances) s.tracks.set(i.key, { ...newTrack(i, Date.now()), configuredAt: 0 });
  await startDaemon(ctx, setup.world);
  const endAt = s.startedAt + args.durationMs;
  if (args.smoke) {
    // The script ends the run; the duration is its deadline.
    let scripted = true;
    await Promise.all([
      watchLoop(ctx, setup, endAt, reference, () => scripted && Date.now() < endAt, true),
      smokeScript(ctx, setup, endAt).finally(() => {
        scripted = false;
      }),
    ]);
  } else {
    const plan = makePlan(rng, args.durationMs, new Set(s.skipped.keys()));
    await Promise.all([
      watchLoop(ctx, setup, endAt, reference),
      faultLoop(ctx, setup, plan, endAt),
      daemonLoop(ctx, setup, plan),
    ]);
  }
  for (const t of timers) clearTimeout(t);
  chatBounded(ctx, setup);
  // The last phase runs with PersistServers false: the final SIGTERM must take every server down.
  const code = await stopDaemon(ctx, setup.world);
  s.log(`daemon stopped (exit ${code})`);
  // A server the daemon killed on its way out may take a moment to be gone: up to 1 s (bounded: 10 looks).
  let left = scanOurs(run);
  for (let i = 0; i < 10 && left.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = scanOurs(run);
  }
  check(
    s,
    'nothing-left-after-sigterm',
    left.length === 0,
    () => `left after SIGTERM: ${left.map((p) => `${p.kind} ${p.key} ${p.pid}`).join(', ')}`,
  );
  const figures = rssFigures(args.seed, args.durationMs, setup.world.starts);
  const result = { mode: args.smoke ? 'smoke' : 'full', ...named(), ...summary(s, figures) };
  console.log(`SOAK_RESULT ${JSON.stringify(result)}`);
  const out = args.out ?? (args.durationMs >= 120_000 && !args.smoke ? join(BENCH, 'SOAK.md') : null);
  if (out)
    writeReport(out, s, figures, `npm run soak -- --seconds ${Math.round(args.durationMs / 1000)} --seed ${args.seed}`);
  exitCode = s.violations.length === 0 ? 0 : 1;
} catch (err) {
  console.error(`soak: ${(err as Error).stack ?? String(err)}`);
} finally {
  for (const t of timers) clearTimeout(t);
  if (setup.world.daemon) await stopDaemon(ctx, setup.world).catch(() => null);
  // A run ended by an error may leave a daemon still starting, or a second daemon under test: the scan misses them.
  for (const pid of [...liveDaemons, ...secondDaemons]) signal(pid, 'SIGKILL');
  const swept = sweep();
  if (swept > 0) s.log(`swept ${swept} leftover processes`);
  reference.close();
  if (setup.fs) {
    // Unmounting loses what the tmpfs holds: a failed run keeps a copy of the instance folders for a look.
    if (exitCode !== 0) cpSync(setup.fs.path, join(tmp.path, 'instances.kept'), { recursive: true });
    setup.fs.unmount();
  }
  await setup.cdn.close();
  await setup.hook.close();
  // SOAK_KEEP=1 keeps a passing run's folder too (its daemon.log shows where the time went).
  if (exitCode === 0 && !process.env.SOAK_KEEP) await tmp.cleanup();
  else console.log(`soak: kept ${tmp.path} (daemon.log, instances/) for a look`);
}
console.log(
  `soak: ${exitCode === 0 ? 'PASS' : 'FAIL'}, ${s.violations.length} violations, seed ${args.seed} (reproduce: ${reproduce})`,
);
process.exit(exitCode);

/**
 * The fault kinds the run set out to inject and the invariants it holds itself to checking, each at least once:
 * the smoke's script, or every kind this machine can inject and every invariant a run of this length can check
 * (rss-stable needs 2 minutes; loop-lag-p99 only counts scrapes in windows the machine did not starve).
 */
function named(): { planned: FaultKind[]; invariants: Invariant[] } {
  if (args.smoke) return { planned: [...SMOKE_FAULTS], invariants: [...SMOKE_INVARIANTS] };
  const kills: FaultKind[] = ['daemon-kill-persist', 'daemon-kill-no-persist'];
  return {
    planned: [...LOOP_KINDS, ...kills].filter((k) => !s.skipped.has(k)),
    invariants: INVARIANTS.filter((i) => i !== 'loop-lag-p99' && (i !== 'rss-stable' || args.durationMs >= 120_000)),
  };
}

/** RSS of the last daemon a minute after its start, and at the end: at most 10 MB more (runs of 2 minutes or more). */
function rssFigures(seed: number, durationMs: number, daemonStarts: number): Figures {
  const last = s.rss.at(-1);
  const mine = last ? s.rss.filter((r) => r.daemon === last.daemon) : [];
  const first = mine[0];
  const base = first ? mine.find((r) => r.at - first.at >= 60_000) : undefined;
  const figures: Figures = { seed, durationMs, rssStartMb: base?.mb ?? null, rssEndMb: last?.mb ?? null, daemonStarts };
  if (durationMs >= 120_000 && base && last) {
    check(
      s,
      'rss-stable',
      // Growth is what a leak shows; a drop (the heap a busy first minute grew, given back) is reported, not held
      // against the daemon.
      last.mb - base.mb <= 10,
      () => `RSS ${base.mb.toFixed(1)} MB after a minute, ${last.mb.toFixed(1)} MB at the end`,
    );
  }
  return figures;
}
