import { hubText, pendingText } from '../../http/dashboard/assets/card-view.js';
import { formatBytes } from '../../store/disk-space.ts';
import type { InstanceStatus } from '../../supervisor/status.ts';

/** The status JSON as received: older daemons may leave out fields, so every field but key/state is optional. */
export type StatusRow = Pick<InstanceStatus, 'key' | 'state'> & Partial<InstanceStatus>;

export const COLUMNS = [
  'KEY',
  'STATE',
  'REVISION',
  'PID',
  'UPTIME',
  'CPU',
  'MEM',
  'PLAYERS',
  'LAST CHECK-IN',
  'RESTARTS',
  'FAILURES',
  'LAST EXIT',
] as const;

function uptime(row: StatusRow, now: number): string {
  if (typeof row.uptimeSeconds === 'number') return formatDuration(row.uptimeSeconds);
  // An older daemon sends startedAt but not uptimeSeconds: derive it when only that is there.
  const started = row.startedAt ? Date.parse(row.startedAt) : NaN;
  return Number.isNaN(started) ? '-' : formatDuration((now - started) / 1000);
}

/** `hang (SIGKILL) 5s ago`, `crash (code 1) 2m ago`; `-` before any exit. Its detail goes under the table. */
export function lastExitCell(row: StatusRow, now: number): string {
  const e = row.lastExit;
  if (!e) return '-';
  if (e.reason === 'launch-failed') return `${e.reason} ${formatAge(e.at, now)}`;
  const status = e.signal !== null ? e.signal : e.code !== null ? `code ${e.code}` : 'status unknown';
  return `${e.reason} (${status}) ${formatAge(e.at, now)}`;
}

/** `<key> update checks failing since … (last success …): <error>`, while the last check failed. */
export function checkLine(row: StatusRow): string | null {
  const c = row.updateCheck;
  if (c?.result !== 'failed') return null;
  const success = c.lastSuccessAt ? `last success ${c.lastSuccessAt}` : 'none has worked since the daemon started';
  return `${row.key} update checks failing since ${c.failingSince ?? c.at} (${success}): ${c.error ?? 'no reason given'}`;
}

/** `<key> stopped by boss from 10.0.0.5 at …; \`watchdog restart <key>\` starts it`, while an operator's stop holds. */
export function stoppedLine(row: StatusRow): string | null {
  const s = row.stoppedBy;
  if (!s || row.state !== 'stopped.idle') return null;
  return `${row.key} stopped ${s.by ? `${s.by} ` : ''}at ${s.at}; it stays stopped across daemon restarts until \`watchdog start ${row.key}\``;
}

/** `<key> last exit: cannot launch … check RunCommand`, while not running (then it is history; `--json` keeps it). */
export function exitLine(row: StatusRow): string | null {
  const detail = row.lastExit?.detail;
  return detail && row.state !== 'server.running' ? `${row.key} last exit: ${detail}` : null;
}

/** CPU in % of one core (`0.4%`, `230%`) and the process tree's resident memory (`1.2 GB`); `-` without a sample. */
export function resourceCells(row: StatusRow): [cpu: string, mem: string] {
  const r = row.resources;
  if (!r) return ['-', '-'];
  const cpu = r.cpuPercent < 10 ? r.cpuPercent.toFixed(1).replace(/\.0$/, '') : String(Math.round(r.cpuPercent));
  return [`${cpu}%`, formatBytes(r.rssBytes)];
}

export function statusCells(row: StatusRow, now: number): string[] {
  const dash = (v: string | number | null | undefined) => (v === null || v === undefined || v === '' ? '-' : String(v));
  return [
    row.key,
    row.state,
    dash(row.revision),
    dash(row.pid),
    uptime(row, now),
    ...resourceCells(row),
    dash(row.players),
    formatAge(row.lastCheckinAt, now),
    dash(row.restarts),
    dash(row.startupFailures),
    lastExitCell(row, now),
  ];
}

const inTime = (iso: string, now: number) => `in ${formatDuration((Date.parse(iso) - now) / 1000)}`;

/** What is pending and what it waits for, a hold, the next scheduled restart and update check; null for none. */
export function maintenanceLine(row: StatusRow, now: number): string | null {
  const m = row.maintenance;
  if (!m) return null;
  const parts: string[] = [];
  const p = m.pending;
  if (p) {
    parts.push(
      `${pendingText(p)} (${p.source}, ${p.when}) since ${formatAge(p.since, now)}, forced ${inTime(p.deadline, now)}`,
    );
  }
  if (m.staged) parts.push(`update ${m.staged} downloaded and staged`);
  if (m.hold)
    parts.push(`held until ${m.hold.until} (${inTime(m.hold.until, now)})${m.hold.reason ? `: ${m.hold.reason}` : ''}`);
  if (m.nextRestart) parts.push(`next restart ${inTime(m.nextRestart, now)}`);
  if (m.nextUpdateCheck) parts.push(`next update check ${inTime(m.nextUpdateCheck, now)}`);
  return parts.length === 0 ? null : `${row.key} maintenance: ${parts.join('; ')}`;
}

/** Agones mode only: `demo agones: GameServer watchdog-game-x7k2p is Allocated`; null otherwise. */
export function agonesLine(row: StatusRow): string | null {
  const a = row.agones;
  if (!a) return null;
  const state = a.state ?? (a.ready ? 'Ready (asked)' : 'not Ready yet');
  return `${row.key} agones: GameServer ${a.gameServer ?? '(not reported yet)'} is ${state}`;
}

/** A server that advertises: `demo hub: listed by https://hub.spacestation14.com/`; null when it is not watched. */
export function hubLine(row: StatusRow, now: number): string | null {
  return row.hub ? `${row.key} hub: ${hubText(row.hub, now)}` : null;
}

/** While launches are blocked: `demo blocked: the watchdog is out of file descriptors (EMFILE) (3 attempts; …)`. */
export function blockedLine(row: StatusRow): string | null {
  const b = row.launchBlocked;
  if (!b) return null;
  return `${row.key} blocked: ${b.message} (${b.attempts} attempt${b.attempts === 1 ? '' : 's'}; retried until it works)`;
}

/** `disk space low: …` once per low (or unreadable) file system: every instance's status carries the same readings. */
export function diskLines(rows: StatusRow[]): string[] {
  const lines = new Set<string>();
  for (const d of rows.flatMap((r) => r.disk ?? [])) {
    if (d.low) lines.add(`disk space low: ${d.message}`);
    else if (d.error !== null) lines.add(`disk: ${d.message}`);
  }
  return [...lines];
}

/** The `watchdog status` table, then the lines that explain it; with `colour`, a bold header and coloured STATEs. */
export function renderStatusTable(rows: StatusRow[], opts: { colour: boolean; now: number }): string {
  const cells = rows.map((r) => statusCells(r, opts.now));
  const widths = COLUMNS.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (parts: string[]) =>
    parts.map((p, i) => (i === parts.length - 1 ? p : p + ' '.repeat((widths[i] ?? 0) - visibleLength(p)))).join('  ');
  const header = line(COLUMNS.map((h) => paint(h, 'bold', opts.colour)));
  const body = cells.map((c) =>
    line(c.map((cell, i) => (i === 1 ? paint(cell, stateStyle(cell), opts.colour) : cell))),
  );
  const explained = [stoppedLine, exitLine, checkLine, maintenanceLine, blockedLine, agonesLine, hubLine];
  const extra = rows
    .flatMap((r) => explained.map((explain) => explain(r, opts.now)))
    .filter((l): l is string => l !== null)
    .concat(diskLines(rows).map((l) => paint(l, 'red', opts.colour)));
  return [header, ...body, ...(extra.length > 0 ? ['', ...extra] : [])].join('\n') + '\n';
}

/** A duration as its two largest units: `45s`, `2m 5s`, `1h 2m`, `3d 4h`. Negative counts as 0. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  const [size, unit, subSize, subUnit] =
    s < 3600 ? [60, 'm', 1, 's'] : s < 86_400 ? [3600, 'h', 60, 'm'] : [86_400, 'd', 3600, 'h'];
  const sub = Math.floor((s % size) / subSize);
  return `${Math.floor(s / size)}${unit}${sub > 0 ? ` ${sub}${subUnit}` : ''}`;
}

/** How long ago an ISO-8601 timestamp was, relative to `now` (ms): `3s ago`; `never` for null or unparsable. */
export function formatAge(iso: string | null | undefined, now: number): string {
  const at = iso ? Date.parse(iso) : Number.NaN;
  if (Number.isNaN(at)) return 'never';
  // The daemon's clock and ours can disagree by a few ms; a check-in is never in the future.
  return `${formatDuration((now - at) / 1000)} ago`;
}

type Style = 'green' | 'yellow' | 'red' | 'dim' | 'bold';

const CODES: Record<Style, [number, number]> = {
  green: [32, 39],
  yellow: [33, 39],
  red: [31, 39],
  dim: [2, 22],
  bold: [1, 22],
};

/** Colours on a TTY while `NO_COLOR` is unset (or empty, as no-color.org says). */
export function colourEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

export function paint(text: string, style: Style | undefined, on: boolean): string {
  if (!on || !style) return text;
  const [open, close] = CODES[style];
  return `\x1b[${open}m${text}\x1b[${close}m`;
}

/** The colour of a dotted state path: green running, yellow in transition, red failing, dim idle. */
export function stateStyle(state: string): Style | undefined {
  if (state === 'server.running') return 'green';
  if (state === 'stopped.failing' || state.startsWith('stopped.failing.')) return 'red';
  if (state === 'stopped.idle' || state.startsWith('stopped.idle.')) return 'dim';
  const top = state.split('.')[0];
  if (top === 'server' || top === 'restarting' || top === 'updating' || top === 'rolling-back') return 'yellow';
  return undefined;
}

/** Removes ANSI styling, to measure what a reader sees. */
export function visibleLength(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI sequences this strips
  return text.replace(/\x1b\[[0-9;]*m/g, '').length;
}
