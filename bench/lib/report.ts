/** What each benchmark hands back, and how it is printed and written into RESULTS.md. */

export type Verdict = 'MET' | 'MISSED' | 'INFO';

export interface Baseline {
  name: string;
  value: number;
}

export interface Figure {
  name: string;
  value: number;
  unit: string;
  /** Ratios are value / baseline.value. */
  baselines: Baseline[];
  /** The target in words ("≤ 2× floor and < PM2"); absent for figures reported for context only. */
  target?: string;
  verdict: Verdict;
  /** For a miss: by how much, in words. */
  note?: string;
}

export interface Section {
  id: string;
  title: string;
  figures: Figure[];
  /** Method, settings, and anything a reader needs to trust or reproduce the figures. */
  notes: string[];
  /** The commands behind the figures: the daemon side and each baseline. */
  commands: string[];
  load: { before: number[]; after: number[] };
  durationMs: number;
  /** Set when the benchmark itself failed; its figures are then whatever it got to. */
  error?: string;
  /** Set when it could not run on this machine (a missing runtime or peer): why. Not a failure. */
  skipped?: string;
  /**
   * Set when this section replaced the one of the full run (`--rerun`): when, why, and what the first run gave; or,
   * with `previous` empty, when a `--rerun` added it to a full run that did not have it.
   */
  rerun?: { at: string; reason: string; previous: string };
}

export function figure(f: Omit<Figure, 'verdict' | 'baselines'> & { baselines?: Baseline[]; met?: boolean }): Figure {
  const { met, ...rest } = f;
  return {
    baselines: [],
    ...rest,
    verdict: rest.target === undefined || met === undefined ? 'INFO' : met ? 'MET' : 'MISSED',
  };
}

export function fmt(value: number, unit = ''): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  const digits = abs >= 1000 ? 0 : abs >= 100 ? 1 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  const text = value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  return unit ? `${text} ${unit}` : text;
}

export function ratio(value: number, baseline: number): string {
  if (!Number.isFinite(value) || !Number.isFinite(baseline) || baseline === 0) return 'n/a';
  return `${(value / baseline).toFixed(2)}×`;
}

/** One console line per figure. */
/** The targeted figures of a section in one line (kept when a rerun replaces it). */
export function sectionDigest(s: Section): string {
  const load = `load ${s.load.before.map((l) => l.toFixed(2)).join(' / ')}`;
  const figures = s.figures.filter((f) => f.target).map((f) => `${f.name} ${fmt(f.value, f.unit)} (${f.verdict})`);
  const told = figures.length ? figures.join('; ') : 'no figure with a target (all INFO)';
  return `${load}; ${s.error ? 'failed' : s.skipped ? `skipped (${s.skipped})` : told}`;
}

export function printSection(s: Section, write: (line: string) => void): void {
  write(
    `\n== ${s.title} (${(s.durationMs / 1000).toFixed(1)} s, load ${s.load.before.map((l) => l.toFixed(2)).join(' ')}) ==`,
  );
  if (s.error) write(`  ERROR: ${s.error}`);
  if (s.skipped) write(`  SKIPPED: ${s.skipped}`);
  for (const f of s.figures) {
    const bases = f.baselines.map((b) => `${b.name} ${fmt(b.value, f.unit)} → ${ratio(f.value, b.value)}`).join(' | ');
    const target = f.target ? ` | target ${f.target}: ${f.verdict}` : '';
    write(`  ${f.name}: ${fmt(f.value, f.unit)}${bases ? ` | ${bases}` : ''}${target}${f.note ? ` (${f.note})` : ''}`);
  }
  for (const n of s.notes) write(`  - ${n}`);
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function sectionMarkdown(s: Section): string {
  const lines = [`## ${s.title}`, ''];
  lines.push(
    `Ran ${(s.durationMs / 1000).toFixed(1)} s; load average before ${s.load.before.map((l) => l.toFixed(2)).join(' / ')}, after ${s.load.after.map((l) => l.toFixed(2)).join(' / ')} (1 / 5 / 15 min).`,
    '',
  );
  if (s.rerun?.previous)
    lines.push(
      `**Rerun** at ${s.rerun.at} (\`npm run bench -- --rerun ${s.id}\`): ${s.rerun.reason}. The figures it replaced were: ${s.rerun.previous}.`,
      '',
    );
  else if (s.rerun)
    lines.push(`**Run on its own** at ${s.rerun.at} (\`npm run bench -- --rerun ${s.id}\`): ${s.rerun.reason}.`, '');
  if (s.error) lines.push(`**The benchmark failed:** ${cell(s.error)}`, '');
  if (s.skipped) lines.push(`**Skipped:** ${cell(s.skipped)}`, '');
  // A skipped or failed section may have no figures: no empty table then.
  if (s.figures.length)
    lines.push('| Figure | Value | Baseline | Ratio | Target | Verdict |', '| --- | ---: | --- | ---: | --- | --- |');
  for (const f of s.figures) {
    const base = f.baselines.map((b) => `${b.name}: ${fmt(b.value, f.unit)}`).join('<br>') || '—';
    const ratios = f.baselines.map((b) => ratio(f.value, b.value)).join('<br>') || '—';
    const verdict =
      f.verdict === 'MISSED' && f.note ? `**MISSED** (${f.note})` : f.verdict === 'MISSED' ? '**MISSED**' : f.verdict;
    lines.push(
      `| ${cell(f.name)} | ${fmt(f.value, f.unit)} | ${cell(base)} | ${ratios} | ${cell(f.target ?? '—')} | ${cell(verdict)} |`,
    );
  }
  if (s.notes.length) {
    lines.push('', ...s.notes.map((n) => `- ${n}`));
  }
  if (s.commands.length) {
    lines.push('', 'Commands:', '', ...s.commands.map((c) => `    ${c}`));
  }
  return lines.join('\n');
}
