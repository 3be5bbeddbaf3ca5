/**
 * Measurements of the dashboard's layout, taken inside the page (Chromium): what overflows the window, which cards
 * overlap, where a row of cards leaves a hole, which event keys are cut. Each returns a list of problems, so a test
 * can assert it is empty and print what went wrong.
 */
import type { Page } from 'playwright-core';

export interface LayoutReport {
  width: number;
  scrollWidth: number;
  problems: string[];
}

/** Runs in the page: every check the layout test makes, as plain DOM reads. */
const MEASURE = `(() => {
  const problems = [];
  const eps = 1;
  const W = innerWidth;
  const r = (el) => el.getBoundingClientRect();
  const name = (el) => el.closest('[data-key]')?.dataset.key || el.id || el.localName;
  const inside = (a, b) => a.left >= b.left - eps && a.right <= b.right + eps && a.top >= b.top - eps && a.bottom <= b.bottom + eps;
  const scrollWidth = document.scrollingElement.scrollWidth;
  if (scrollWidth > W) problems.push('the page is ' + scrollWidth + ' px wide in a ' + W + ' px window');
  for (const el of document.querySelectorAll('header.top, main, main > section, .card, .chart, .events'))
    if (r(el).right > W + eps || r(el).left < -eps) problems.push(name(el) + ' reaches past the window: ' + r(el).left + '..' + r(el).right);
  const cards = [...document.querySelectorAll('#instances > .card')];
  for (const card of cards) {
    const box = r(card);
    for (const el of card.querySelectorAll('button, .facts > div, .state-pill, h2.key, summary'))
      // Not rendered (inside a hidden panel such as the console of an instance without one, or a closed details
      // panel, whose content Chromium still lays out): nowhere to be outside.
      if (!el.hidden && !(el.localName !== 'summary' && el.closest('details:not([open])')) && el.getClientRects().length > 0 && !inside(r(el), box)) problems.push(card.dataset.key + ': ' + (el.dataset.action ?? el.textContent.trim().slice(0, 20)) + ' is outside its card');
    for (const dd of card.querySelectorAll('.facts dd'))
      if (dd.scrollWidth > dd.clientWidth + eps) problems.push(card.dataset.key + ': ' + dd.dataset.field + ' is cut');
  }
  for (let i = 0; i < cards.length; i++)
    for (let j = i + 1; j < cards.length; j++) {
      const a = r(cards[i]), b = r(cards[j]);
      const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (x > eps && y > eps) problems.push(cards[i].dataset.key + ' overlaps ' + cards[j].dataset.key);
    }
  // Each row of cards spans the section from edge to edge: no hole beside a card.
  const section = r(document.querySelector('#instances'));
  const rows = new Map();
  for (const card of cards) {
    const top = Math.round(r(card).top);
    rows.set(top, [...(rows.get(top) ?? []), r(card)]);
  }
  for (const [top, row] of rows) {
    const left = Math.min(...row.map((b) => b.left)), right = Math.max(...row.map((b) => b.right));
    if (left > section.left + eps || right < section.right - eps)
      problems.push('the row at ' + top + ' px spans ' + left + '..' + right + ' of ' + section.left + '..' + section.right);
  }
  // Beside the events (a wide window), the cards and the events panel end together: no gap under either.
  const events = r(document.querySelector('.events-panel'));
  const cardsBottom = Math.max(...cards.map((c) => r(c).bottom));
  if (events.left > section.right && Math.abs(events.bottom - cardsBottom) > 2)
    problems.push('the cards end at ' + cardsBottom + ' px, the events at ' + events.bottom);
  for (const key of document.querySelectorAll('#events .event-key'))
    if (key.scrollWidth > key.clientWidth + eps) problems.push('the event key ' + key.textContent + ' is cut');
  return { width: W, scrollWidth, problems };
})()`;

export const measureLayout = (page: Page) => page.evaluate<LayoutReport>(MEASURE);
