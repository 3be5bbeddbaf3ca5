import type { MachineInfo } from './machine.ts';
import { type Section, sectionMarkdown } from './report.ts';

/** `lead` and the sections' titles, or nothing when there are none. */
const titled = (list: readonly Section[], lead: string): string =>
  list.length ? `${lead}${list.map((s) => s.title).join(', ')}.` : '';

/** bench/RESULTS.md: when, where, with what, every figure with its baseline, ratio and verdict, and the commands. */
export function resultsMarkdown(opts: {
  machine: MachineInfo;
  sections: Section[];
  totalMs: number;
  argv: string[];
  date?: string;
}): string {
  const { machine: m, sections } = opts;
  const missed = sections.flatMap((s) =>
    s.figures.filter((f) => f.verdict === 'MISSED').map((f) => `${s.title}: ${f.name}${f.note ? ` (${f.note})` : ''}`),
  );
  const failed = sections.filter((s) => s.error).map((s) => s.title);
  const skipped = sections.filter((s) => s.skipped).map((s) => `${s.title} (${s.skipped})`);
  // A rerun's reason is written into its section, not here.
  const env = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_') && k !== 'BENCH_RERUN_REASON')
    .map(([k, v]) => `${k}=${v}`);
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench${opts.argv.length ? ` -- ${opts.argv.join(' ')}` : ''}\`${env.length ? ` with ${env.join(' ')}` : ''} (\`node --import tsx bench/run.ts\`); see bench/README.md for the method. Every figure is measured against a baseline run side by side in the same run on the same machine; the ratio is figure ÷ baseline.`,
    '',
    `- Date: ${opts.date ?? new Date().toISOString()} (when the full run finished)`,
    `- Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB.toFixed(1)} GiB memory (${m.freeMemoryGiB.toFixed(1)} GiB free at start), ${m.os}`,
    `- Node ${m.node}; packages: ${Object.entries(m.packages)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `- Whole run: ${(opts.totalMs / 1000).toFixed(0)} s. The machine is shared with other engineers' test runs: each section gives the load average around it.${titled(
      sections.filter((s) => s.rerun?.previous),
      ' Rerun afterwards (their first figures are kept in their section): ',
    )}${titled(
      sections.filter((s) => s.rerun && !s.rerun.previous),
      ' Run on their own afterwards and added (newer than the full run): ',
    )}`,
    `- Verdict: ${missed.length === 0 && failed.length === 0 ? 'every target met.' : [missed.length ? `MISSED: ${missed.join('; ')}.` : '', failed.length ? `Failed to run: ${failed.join(', ')}.` : ''].join(' ').trim()}${skipped.length ? ` Skipped: ${skipped.join('; ')}.` : ''}`,
    '',
  ];
  for (const s of sections) lines.push(sectionMarkdown(s), '');
  return lines.join('\n');
}
