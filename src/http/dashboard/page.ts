/**
 * The dashboard page as sent: `index.html` with every card, the recent events and the chart filled in by the page's
 * own rules (assets/*-view.js), so a browser without scripts shows them, and its state inlined as JSON. The CSP
 * allows no inline script or style: the JSON is never run, a card's colour is a `data-color`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DashboardMe } from '../schemas.ts';
import {
  ACTIONS,
  actionBlockers,
  actionLabel,
  type CardStatus,
  cardFields,
  PALETTE_SIZE,
  panelsAllowed,
  shownName,
  stateGroup,
} from './assets/card-view.js';
import { lowDiskLines } from './assets/disk-view.js';
import { eventLevel, eventText } from './assets/event-view.js';
import type { RecentEvent } from './recent-events.ts';

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);

/** The daemon does not know the browser's time zone: the first paint says UTC. */
const utcTime = (at: number) => new Date(at).toISOString().slice(11, 19);

/** Newest first, as event-list.js makes them (no whitespace between: an empty list stays `:empty`). */
function renderEvents(recent: readonly RecentEvent[], colors: Map<string, number>): string {
  return [...recent]
    .reverse()
    .map(({ type, event }) => {
      const e = event as { key?: string; at: number };
      const key = e.key ?? '';
      const level = eventLevel(type, event);
      const color = colors.get(key);
      return (
        `<li data-type="${escapeHtml(type)}" data-key="${escapeHtml(key)}"${level ? ` data-level="${level}"` : ''}>` +
        `<time datetime="${new Date(e.at).toISOString()}">${utcTime(e.at)}</time>` +
        `<span class="event-key"${color === undefined ? '' : ` data-color="${color}"`}>${escapeHtml(key)}</span>` +
        `<span class="event-text">${escapeHtml(eventText(type, event, utcTime))}</span></li>`
      );
    })
    .join('');
}

/** The drawing's smallest labels are 9 units: near 11 px. The chart box scrolls rather than shrink it to the window. */
const CHART_SCALE = 1.2;

/** The SVG at its readable size, each instance's state node marked in the instance's colour slot. */
function renderChart(svg: string, states: ReadonlyMap<string, readonly string[]>, colors: Map<string, number>) {
  const box = /<svg\b[^>]*\bviewBox="([\d.\s-]+)"/.exec(svg)?.[1]?.trim().split(/\s+/).map(Number);
  let out = svg;
  if (box && box.length === 4) {
    const [w, h] = [Math.round((box[2] ?? 0) * CHART_SCALE), Math.round((box[3] ?? 0) * CHART_SCALE)];
    out = out.replace(/<svg\b/, `<svg width="${w}" height="${h}"`);
  }
  for (const [state, keys] of states) {
    const id = escapeHtml(`state:${state}`);
    const color = colors.get(keys[0] ?? '') ?? 0;
    out = out.replace(
      `<g id="${id}" class="node">`,
      `<g id="${id}" class="node active" data-color="${color}" data-instances="${escapeHtml(keys.join(' '))}">`,
    );
  }
  return out;
}

/**
 * `now`: the server time the page was made at, which ages are computed from and the page corrects its clock by;
 * `stateNames`: each state's plain name in the operator's chart (the pill's tooltip); `me`: absent without accounts.
 */
export interface PageState {
  version: string;
  now: number;
  instances: CardStatus[];
  recent: readonly RecentEvent[];
  stateNames?: Readonly<Record<string, string>>;
  me?: DashboardMe;
}

export type ChartSource = { svg: string } | { error: string };

/** Replaces the one occurrence of `pattern` (none is a bug: the template and this file disagree). */
function fill(html: string, pattern: RegExp, replace: (...groups: string[]) => string): string {
  let hits = 0;
  const out = html.replace(new RegExp(pattern.source, 'g'), (...m: unknown[]) => {
    hits++;
    return replace(...(m.slice(0, -2) as string[]));
  });
  if (hits !== 1) throw new Error(`dashboard page: ${pattern} matched ${hits} times in index.html (expected once)`);
  return out;
}

/** Colour slots by key order, as the page assigns them to cards it adds later. */
export function colorSlots(keys: readonly string[]): Map<string, number> {
  return new Map([...keys].sort().map((k, i) => [k, i % PALETTE_SIZE]));
}

export function renderCard(
  template: string,
  status: CardStatus,
  color: number,
  now: number,
  stateName?: string,
  rights?: readonly string[],
): string {
  let html = template.trim();
  // Panels the client may not use are left out of sight (the daemon refuses them anyway); card-view.js says which.
  const panels = panelsAllowed(rights);
  const hide: Array<[RegExp, boolean]> = [
    [/<details class="log">/, panels.log],
    [/<details class="backups">/, panels.backups],
    [/<details class="files">/, panels.files],
    [/<button type="button" class="backup-now">/, panels.backupNow],
  ];
  for (const [tag, shown] of hide) if (!shown) html = fill(html, tag, (open = '') => open.replace(/>$/, ' hidden>'));
  html = fill(
    html,
    /<article class="card">/,
    () =>
      `<article class="card" data-key="${escapeHtml(status.key)}" data-state="${escapeHtml(status.state)}" data-color="${color}">`,
  );
  html = fill(html, /<h2 class="key"><\/h2>/, () => `<h2 class="key">${escapeHtml(status.key)}</h2>`);
  const name = shownName(status);
  html = fill(
    html,
    /<span class="name muted"><\/span>/,
    () => `<span class="name muted"${name ? ` title="${escapeHtml(name)}"` : ''}>${escapeHtml(name)}</span>`,
  );
  html = fill(
    html,
    /<span class="state-pill" data-field="state"><\/span>/,
    () =>
      `<span class="state-pill" data-field="state" data-group="${escapeHtml(stateGroup(status.state))}"${stateName ? ` title="${escapeHtml(stateName)}"` : ''}>${escapeHtml(status.state)}</span>`,
  );
  for (const [field, text] of Object.entries(cardFields(status, now))) {
    if (field === 'state') continue;
    html = fill(
      html,
      new RegExp(`<dd data-field="${field}"></dd>`),
      () => `<dd data-field="${field}">${escapeHtml(text)}</dd>`,
    );
  }
  if (status.agones) html = fill(html, /<div data-row="agones" hidden>/, () => '<div data-row="agones">');
  if (status.hub) html = fill(html, /<div data-row="hub" hidden>/, () => '<div data-row="hub">');
  const blockers = actionBlockers(status, rights);
  for (const action of ACTIONS) {
    html = fill(
      html,
      new RegExp(`<button type="button" data-action="${action}"([^>]*)>[^<]*</button>`),
      (_all, attrs = '') => {
        const why = blockers[action];
        const extra = why ? ` disabled title="${escapeHtml(why)}"` : '';
        return `<button type="button" data-action="${action}"${attrs}${extra}>${escapeHtml(actionLabel(action, status))}</button>`;
      },
    );
  }
  return html;
}

export function renderPage(index: string, state: PageState, chart: ChartSource): string {
  const template = /<template id="instance-card">([\s\S]*?)<\/template>/.exec(index)?.[1];
  if (template === undefined) throw new Error('dashboard page: index.html has no <template id="instance-card">');
  const statuses = [...state.instances].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const colors = colorSlots(statuses.map((s) => s.key));
  const cards = statuses
    .map((s) =>
      renderCard(
        template,
        s,
        colors.get(s.key) ?? 0,
        state.now,
        state.stateNames?.[s.state],
        state.me?.permissions[s.key],
      ),
    )
    .join('\n');
  // `<` escaped so no text in it (an instance name) can close the script element.
  const json = JSON.stringify(state).replace(/</g, '\\u003c');
  let html = index;
  html = fill(
    html,
    /<span id="version" class="muted"><\/span>/,
    () => `<span id="version" class="muted">v${escapeHtml(state.version)}</span>`,
  );
  html = fill(
    html,
    /<span id="conn" class="conn" data-state="connecting" role="status">[^<]*<\/span>/,
    () =>
      `<span id="conn" class="conn" data-state="snapshot" role="status" title="the page as the daemon sent it; live updates follow">as of ${utcTime(state.now)} UTC</span>`,
  );
  html = fill(
    html,
    /(<section id="instances"[^>]*>)(<\/section>)/,
    (_all, open = '', close = '') => `${open}\n${cards}\n${close}`,
  );
  html = fill(
    html,
    /<ol id="events" class="events" aria-live="polite"><\/ol>/,
    () => `<ol id="events" class="events" aria-live="polite">${renderEvents(state.recent, colors)}</ol>`,
  );
  // Keys by state in key order, as the page's chart.js groups them.
  const byState = new Map<string, string[]>();
  for (const s of statuses) byState.set(s.state, [...(byState.get(s.state) ?? []), s.key]);
  html = fill(html, /(<div id="chart" class="chart"[^>]*>)(<\/div>)/, (_all, open = '', close = '') =>
    'svg' in chart
      ? `${open}${renderChart(chart.svg, byState, colors)}${close}`
      : `${open}The statechart could not be drawn (${escapeHtml(chart.error)}).${close}`,
  );
  if (state.me?.session) {
    const who = `<span id="who" class="who">${escapeHtml(state.me.user ?? '')}</span>`;
    html = fill(html, /<span id="who" class="who" hidden><\/span>/, () => who);
    html = fill(html, /<button type="button" id="logout" hidden>/, () => '<button type="button" id="logout">');
  }
  const disk = lowDiskLines(statuses);
  if (disk.length > 0)
    html = fill(
      html,
      /<div id="disk-banner" class="disk-banner" role="alert" hidden><\/div>/,
      () =>
        `<div id="disk-banner" class="disk-banner" role="alert">${disk.map((l) => `<p class="disk-line">${escapeHtml(l)}</p>`).join('')}</div>`,
    );
  html = fill(html, /<\/main>/, () => `</main>\n  <script type="application/json" id="initial-state">${json}</script>`);
  return html;
}

/** Reads `index.html` once; each request renders it with the instances as they are now. */
export function dashboardPage(assetsDir: string): (state: PageState, chart: ChartSource) => Promise<string> {
  let index: Promise<string> | null = null;
  return async (state, chart) => {
    index ??= readFile(join(assetsDir, 'index.html'), 'utf8').catch((err: unknown) => {
      index = null;
      throw err;
    });
    return renderPage(await index, state, chart);
  };
}
