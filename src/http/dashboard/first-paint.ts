/**
 * The parts of the dashboard's first response besides the cards: the recent events and the statechart, rendered
 * by the daemon so a plain screenshot (or a browser without scripts) shows them; the page takes them over.
 */
import { eventLevel, eventText } from './assets/event-view.js';
import type { RecentEvent } from './recent-events.ts';

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);

/** The daemon does not know the browser's time zone: the first paint says UTC, as the header does. */
const utcTime = (at: number) => new Date(at).toISOString().slice(11, 19);

/** `<li>` rows, newest first, as event-list.js makes them (no whitespace between: an empty list stays `:empty`). */
export function renderEvents(recent: readonly RecentEvent[], colors: Map<string, number>): string {
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

/**
 * Readable scale: the drawing's smallest labels are 9 units; 1.2 px a unit keeps them near 11 px. The chart box
 * scrolls sideways instead of shrinking the drawing to the window (a 1905-unit chart in 1000 px was ~5 px text).
 */
export const CHART_SCALE = 1.2;

/** The SVG at its readable size, each instance's state node marked in the instance's colour slot. */
export function renderChart(svg: string, states: ReadonlyMap<string, readonly string[]>, colors: Map<string, number>) {
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

/** Instance keys by state, each list in key order (the page's chart.js groups them the same way). */
export function keysByState(statuses: ReadonlyArray<{ key: string; state: string }>): Map<string, string[]> {
  const byState = new Map<string, string[]>();
  for (const s of [...statuses].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
    byState.set(s.state, [...(byState.get(s.state) ?? []), s.key]);
  }
  return byState;
}
