import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAULT_KINDS, INVARIANTS, type SoakState } from './state.ts';

/** The run's figures: printed at the end, and written as Markdown (bench/SOAK.md) for long runs. */

export interface Figures {
  seed: number;
  durationMs: number;
  rssStartMb: number | null;
  rssEndMb: number | null;
  daemonStarts: number;
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? null;
};
const fmt = (ms: number | null) => (ms === null ? 'n/a' : `${(ms / 1000).toFixed(2)} s`);

export function summary(s: SoakState, f: Figures): Record<string, unknown> {
  return {
    seed: f.seed,
    seconds: Math.round(f.durationMs / 1000),
    faults: Object.fromEntries(FAULT_KINDS.map((k) => [k, s.faults.get(k) ?? 0])),
    skipped: Object.fromEntries(s.skipped),
    checks: Object.fromEntries(INVARIANTS.map((k) => [k, s.checks.get(k) ?? 0])),
    violations: s.violations.length,
    worstRelaunchMs: s.relaunchMs.length ? Math.max(...s.relaunchMs) : null,
    worstRelaunchExcessMs: s.relaunchExcessMs.length ? Math.max(...s.relaunchExcessMs) : null,
    worstHangKillMs: s.hangKillMs.length ? Math.max(...s.hangKillMs) : null,
    lagP99MaxMs: s.lagP99.length ? Math.max(...s.lagP99.map((l) => l.ms)) : null,
    lagDisturbed: s.lagP99.filter((l) => l.disturbed).length,
    lagMaxMs: s.lagMaxMs.length ? Math.max(...s.lagMaxMs) : null,
    statusSlowestMs: s.statusMs.length ? Math.max(...s.statusMs) : null,
    binSwapWindows: s.binSwapWindows,
    rssStartMb: f.rssStartMb,
    rssEndMb: f.rssEndMb,
  };
}

/** The lag paragraph: the daemon's p99 per scrape, and how starved the machine was over the same windows. */
function lagLines(s: SoakState): string[] {
  const ms = (xs: number[], p: number, digits = 1) => pct(xs, p)?.toFixed(digits) ?? 'n/a';
  const all = s.lagP99.map((l) => l.ms);
  const calm = s.lagP99.filter((l) => !l.disturbed).map((l) => l.ms);
  const waits = s.lagP99.map((l) => l.wait);
  const disturbed = s.lagP99.filter((l) => l.disturbed).length;
  const reference = s.lagP99.map((l) => l.machine ?? 0);
  return [
    `Event-loop lag p99 per /metrics scrape (${all.length} scrapes, 5 s apart): p50 ${ms(all, 50)} ms, worst ${ms(all, 100)} ms;`,
    `worst in a window the machine did not starve: ${ms(calm, 100)} ms. Starved windows (daemon ≥ 20 ms while its`,
    'event-loop thread waited for a CPU as long as could explain that by itself, 1 % of the samples 20 ms late each,',
    'about 100 ms a window; or an idle reference process lagged ≥ 10 ms too; not counted as checks):',
    `${disturbed}. Run-queue wait of the loop thread per window: p50 ${ms(waits, 50, 0)} ms, worst ${ms(waits, 100, 0)} ms;`,
    `the idle reference's p99: worst ${ms(reference, 100)} ms. Largest single event-loop delay per window (a long block`,
    `hides in a p99): p50 ${ms(s.lagMaxMs, 50)} ms, worst ${ms(s.lagMaxMs, 100)} ms. GET /api/instances answered in`,
    `p50 ${ms(s.statusMs, 50, 0)} ms, slowest ${ms(s.statusMs, 100, 0)} ms (${s.statusMs.length} polls).`,
  ];
}

/** What the daemons said they did, counted from daemon.log: adoptions, leftover shutdowns, refusals, drops. */
function fromDaemonLog(s: SoakState): string[] {
  let text = '';
  try {
    text = readFileSync(join(s.dir, 'daemon.log'), 'utf8');
  } catch {
    return [];
  }
  const count = (re: RegExp) => text.match(re)?.length ?? 0;
  return [
    `- daemon log: ${count(/adopted the server left running/g)} servers adopted after a daemon restart, ` +
      `${count(/shutting down a server left behind/g)} leftovers shut down (PersistServers false), ` +
      `${count(/check-in rejected: stale or wrong token/g)} check-ins refused for a stale or wrong secret, ` +
      `${count(/chat webhook refused or unreachable; message dropped/g)} chat messages dropped after their retries`,
  ];
}

export function writeReport(file: string, s: SoakState, f: Figures, command: string): void {
  const lines = [
    '# Soak run',
    '',
    `Written by \`${command}\` (bench/soak/run.ts; see bench/README.md, "Soak"). Reproduce with the same seed.`,
    '',
    `- seed: **${f.seed}**`,
    `- duration: ${Math.round(f.durationMs / 1000)} s, ${f.daemonStarts} daemon starts`,
    `- result: **${s.violations.length === 0 ? 'pass' : 'FAIL'}**, ${s.violations.length} violations`,
    `- relaunch after a crash: ${s.relaunchMs.length} measured, p50 ${fmt(pct(s.relaunchMs, 50))}, worst ${fmt(pct(s.relaunchMs, 100))};`,
    `  beyond the back-off due for its place in the crash streak: p50 ${fmt(pct(s.relaunchExcessMs, 50))}, worst ${fmt(pct(s.relaunchExcessMs, 100))} (bound: back-off + 3 s)`,
    `- frozen server to its kill: ${s.hangKillMs.length} measured, worst ${fmt(pct(s.hangKillMs, 100))}`,
    ...fromDaemonLog(s),
    `- bin/ seen between the install's two renames (old build whole in bin.prev): ${s.binSwapWindows} times`,
    '',
    '## Faults injected',
    '',
    '| kind | count |',
    '| --- | --- |',
    ...FAULT_KINDS.map(
      (k) => `| ${k} | ${s.skipped.has(k) ? `skipped: ${s.skipped.get(k)}` : (s.faults.get(k) ?? 0)} |`,
    ),
    '',
    '## Invariants',
    '',
    '| invariant | checks | violated |',
    '| --- | --- | --- |',
    ...INVARIANTS.map(
      (k) => `| ${k} | ${s.checks.get(k) ?? 0} | ${s.violations.filter((v) => v.invariant === k).length} |`,
    ),
    '',
    ...(s.violations.length
      ? [
          '## Violations',
          '',
          ...s.violations.map((v) => `- +${((v.at - s.startedAt) / 1000).toFixed(1)} s ${v.invariant}: ${v.detail}`),
          '',
        ]
      : []),
    '## Daemon RSS and event-loop lag',
    '',
    `RSS of the last daemon one minute after its start: ${f.rssStartMb?.toFixed(1) ?? 'n/a'} MB; at the end: ${f.rssEndMb?.toFixed(1) ?? 'n/a'} MB.`,
    ...lagLines(s),
    '',
    '| time | daemon pid | RSS (MB) |',
    '| --- | --- | --- |',
    ...s.rss
      .filter((_, i) => i % Math.max(1, Math.ceil(s.rss.length / 40)) === 0)
      .map((r) => `| +${Math.round((r.at - s.startedAt) / 1000)} s | ${r.daemon} | ${r.mb.toFixed(1)} |`),
    '',
  ];
  writeFileSync(file, lines.join('\n'));
}
