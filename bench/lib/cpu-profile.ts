import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { ROOT } from './env.ts';

/** The parts of a V8 .cpuprofile (written by `node --cpu-prof`) that a self-time summary needs. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  what: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time grouped by where the code lives: src/, machines/, a node_modules package, node internals, GC. */
  byArea: ProfileLine[];
  /** The heaviest functions by self time. */
  top: ProfileLine[];
}

function area(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const path = url.replace(/^file:\/\//, '');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (nm) return `node_modules/${nm[1]}`;
  if (path.startsWith('node:')) return 'node internals';
  if (path.startsWith(ROOT)) return relative(ROOT, path).split('/')[0] + '/';
  return path;
}

/**
 * Reads the main thread's .cpuprofile (or, with thread 'other', a worker thread's) (only samples between `fromMs` and `toMs` after the profile began, when given) in `dir` and sums self time per function and per area. Files are named
 * CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile; tsx's module hooks run in a worker thread with its own file.
 */
export async function summarizeProfile(
  dir: string,
  window: { fromMs?: number; toMs?: number; thread?: 'main' | 'other' } = {},
  topN = 12,
): Promise<ProfileSummary | null> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.cpuprofile')).sort();
  const main = (f: string) => f.split('.')[4] === '0';
  const file =
    window.thread === 'other' ? files.filter((f) => !main(f)).at(-1) : (files.filter(main).at(-1) ?? files.at(-1));
  if (!file) return null;
  const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  let clock = 0;
  const from = (window.fromMs ?? 0) * 1000;
  const to = (window.toMs ?? Infinity) * 1000;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    clock += us;
    const frame = byId.get(id);
    if (!frame || clock < from || clock > to) return;
    total += us;
    const where = frame.url ? `${relative(ROOT, frame.url.replace(/^file:\/\//, ''))}:${frame.lineNumber + 1}` : '';
    const name = `${frame.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    self.set(name, (self.get(name) ?? 0) + us);
    const a = area(frame.url, frame.functionName);
    areas.set(a, (areas.get(a) ?? 0) + us);
  });
  const lines = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([what, us]) => ({ what, ms: us / 1000, share: total ? us / total : 0 }));
  return { totalMs: total / 1000, byArea: lines(areas), top: lines(self).slice(0, topN) };
}

export function profileText(p: ProfileSummary, skipIdle = true): string {
  const busy = p.byArea.filter((l) => !skipIdle || l.what !== '(idle)');
  const busyMs = busy.reduce((a, l) => a + l.ms, 0);
  const pct = (ms: number) => `${((ms / busyMs) * 100).toFixed(1)}%`;
  const areas = busy
    .slice(0, 8)
    .map((l) => `${l.what} ${pct(l.ms)}`)
    .join(', ');
  const top = p.top
    .filter((l) => !skipIdle || !l.what.startsWith('(idle)'))
    .slice(0, 10)
    .map((l) => `${l.what} ${pct(l.ms)}`)
    .join('; ');
  return `busy ${busyMs.toFixed(0)} ms of ${p.totalMs.toFixed(0)} ms profiled. By area (self time, share of busy): ${areas}. Top functions: ${top}`;
}
