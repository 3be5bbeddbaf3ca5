/**
 * `npm run bench [-- <id> ...]`: runs the benchmarks (all five by default: crash checkin update scale footprint),
 * prints every figure with its baseline and ratio, and, for a full run, writes bench/RESULTS.md. Exits 0 whatever
 * the verdicts: a missed target is a finding, printed as MISSED with its figures. See bench/README.md.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BENCH } from './lib/env.ts';
import { loadAverage, machineInfo } from './lib/machine.ts';
import { printSection, type Section } from './lib/report.ts';
import { resultsMarkdown } from './lib/results.ts';

type Bench = () => Promise<Omit<Section, 'load' | 'durationMs'>>;

const envNumber = (name: string, def: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : def;
};

const BENCHES: Record<string, { title: string; run: Bench }> = {
  crash: {
    title: '1. Crash → relaunch gap',
    run: async () => (await import('./crash.ts')).runCrash({ crashes: envNumber('BENCH_CRASHES', 60), firstCrashSamples: 6 }),
  },
  checkin: {
    title: '2. Check-in throughput',
    run: async () => (await import('./checkin.ts')).runCheckin({ seconds: envNumber('BENCH_CHECKIN_SECONDS', 10) }),
  },
  update: {
    title: '3. Update pipeline',
    run: async () => (await import('./update.ts')).runUpdate({ megabytes: envNumber('BENCH_UPDATE_MB', 200) }),
  },
  scale: {
    title: '4. Scale',
    run: async () => (await import('./scale.ts')).runScale({ instances: envNumber('BENCH_SCALE_INSTANCES', 200), frozen: 20 }),
  },
  footprint: {
    title: '5. Footprint',
    run: async () => (await import('./footprint.ts')).runFootprint({ trials: 4 }),
  },
};

/** Whole-run budget: a benchmark is not started once this much time has gone (the issue asks for < 10 minutes). */
const BUDGET_MS = 9 * 60_000;

async function main(): Promise<void> {
  const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = asked.filter((id) => !(id in BENCHES));
  if (unknown.length) {
    console.error(`unknown benchmark ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
    return;
  }
  const ids = asked.length ? asked : Object.keys(BENCHES);
  const started = Date.now();
  const machine = await machineInfo();
  console.log(`bench: ${ids.join(', ')} on ${machine.cpuModel} × ${machine.cores}, ${machine.memoryGiB.toFixed(1)} GiB, node ${machine.node}, load ${loadAverage().map((l) => l.toFixed(2)).join(' ')}`);
  const sections: Section[] = [];
  for (const id of ids) {
    const bench = BENCHES[id] as { title: string; run: Bench };
    const before = loadAverage();
    const t0 = Date.now();
    if (t0 - started > BUDGET_MS) {
      sections.push({ id, title: bench.title, figures: [], notes: [], commands: [], load: { before, after: before }, durationMs: 0, error: 'skipped: the run was over its time budget' });
      continue;
    }
    let section: Section;
    try {
      const result = await bench.run();
      section = { ...result, load: { before, after: loadAverage() }, durationMs: Date.now() - t0 };
    } catch (err) {
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      section = { id, title: bench.title, figures: [], notes: [], commands: [], load: { before, after: loadAverage() }, durationMs: Date.now() - t0, error: message };
    }
    sections.push(section);
    printSection(section, (line) => console.log(line));
  }
  const totalMs = Date.now() - started;
  const missed = sections.flatMap((s) => s.figures.filter((f) => f.verdict === 'MISSED').map((f) => `${s.id}: ${f.name}`));
  const failed = sections.filter((s) => s.error).map((s) => s.id);
  const verdict = [missed.length ? `MISSED: ${missed.join('; ')}` : '', failed.length ? `FAILED: ${failed.join(', ')}` : ''].filter(Boolean).join('; ');
  console.log(`\nbench finished in ${(totalMs / 1000).toFixed(0)} s; ${verdict || 'every target met'}`);
  const full = ids.length === Object.keys(BENCHES).length;
  const out = process.env.BENCH_OUT ?? (full ? join(BENCH, 'RESULTS.md') : null);
  if (out) {
    await writeFile(out, resultsMarkdown({ machine, sections, totalMs, argv: process.argv.slice(2) }));
    console.log(`wrote ${out}`);
  } else {
    console.log('(a partial run: RESULTS.md left as it is; set BENCH_OUT=<file> to write one)');
  }
}

try {
  await main();
} catch (err) {
  console.error('bench runner failed:', err);
}
// Exit 0 by design (see the header); also ends any handle a library left open.
process.exit(0);
