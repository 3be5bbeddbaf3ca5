// The statechart: the SVG the daemon renders from the machine, with each instance's state node highlighted. Two
// views: the operator's (the default, sent in the page by the daemon: ../page.ts) and the developer's, fetched
// when the operator asks for it. Both name their nodes by the machine's state path, so highlighting is the same.
import { $, instances } from './shared.js';

const NODE_PREFIX = 'state:';
const SVG_NS = 'http://www.w3.org/2000/svg';
/** As the daemon sizes it (page.ts CHART_SCALE): the smallest labels near 11 px. */
const CHART_SCALE = 1.2;
const LABELS = {
  operator: { button: 'Developer chart', aria: "Instance statechart, operator's view" },
  developer: { button: "Operator's view", aria: "Instance statechart, developer's view" },
};
let chartReady = false;
/** Each view's drawing once loaded (the page's own for the operator's view). */
const drawings = new Map();

export async function loadChart() {
  const holder = $('#chart');
  setUpFit(holder);
  setUpViews(holder);
  const sent = $('svg', holder);
  if (sent) {
    drawings.set(holder.dataset.view ?? 'operator', sent);
    chartReady = true;
    highlightChart();
    showActive(holder);
    return;
  }
  await showView(holder, holder.dataset.view ?? 'operator');
}

/** Shows `view`, fetched from the daemon the first time; says why in the box when it cannot be had. */
async function showView(holder, view) {
  try {
    let svg = drawings.get(view);
    if (!svg) {
      svg = await fetchChart(view);
      drawings.set(view, svg);
    }
    holder.replaceChildren(svg);
    holder.dataset.view = view;
    holder.setAttribute('aria-label', LABELS[view].aria);
    const button = $('#chart-view');
    if (button) {
      button.textContent = LABELS[view].button;
      button.setAttribute('aria-pressed', String(view === 'developer'));
    }
    chartReady = true;
    highlightChart();
    showActive(holder);
  } catch (err) {
    chartReady = false;
    holder.textContent = `The statechart could not be loaded (${err instanceof Error ? err.message : String(err)}).`;
  }
}

async function fetchChart(view) {
  const res = await fetch(`/statechart.svg?view=${view}`);
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const doc = new DOMParser().parseFromString(await res.text(), 'image/svg+xml');
  const svg = doc.documentElement;
  if (svg.nodeName !== 'svg') throw new Error('not an SVG document');
  const box = svg.getAttribute('viewBox')?.trim().split(/\s+/).map(Number);
  if (box?.length === 4) {
    svg.setAttribute('width', String(Math.round(box[2] * CHART_SCALE)));
    svg.setAttribute('height', String(Math.round(box[3] * CHART_SCALE)));
  }
  return document.importNode(svg, true);
}

/** One button between the operator's view and the developer's; the link beside it stays for a page without scripts. */
function setUpViews(holder) {
  const button = $('#chart-view');
  if (!button) return;
  button.hidden = false;
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await showView(holder, holder.dataset.view === 'developer' ? 'operator' : 'developer');
    } finally {
      button.disabled = false;
    }
  });
}

/** At the readable size the chart is wider than its box: start scrolled to the first instance's state. */
function showActive(holder) {
  const node = $('g.node.active', holder);
  if (!node || holder.scrollWidth <= holder.clientWidth) return;
  const box = node.getBoundingClientRect();
  const view = holder.getBoundingClientRect();
  holder.scrollLeft += box.left + box.width / 2 - (view.left + view.width / 2);
  holder.scrollTop += box.top + box.height / 2 - (view.top + view.height / 2);
  // Then moved a little, so that no label is cut at the box's edges (the left one first), the state still in view.
  const labels = [...holder.querySelectorAll('svg text')].map((t) => t.getBoundingClientRect());
  const state = node.getBoundingClientRect();
  const cutAt = (x) => labels.filter((r) => r.left < x && r.right > x);
  const cuts = (dx) => [cutAt(view.left + dx), cutAt(view.right + dx)];
  const [left, right] = cuts(0);
  const moves = [
    ...(left.length ? [Math.min(...left.map((r) => r.left)) - view.left - 8] : []),
    ...(right.length ? [Math.max(...right.map((r) => r.right)) - view.right + 8] : []),
  ].filter((dx) => state.left - dx >= view.left && state.right - dx <= view.right);
  const whole = moves.find((dx) => cuts(dx).every((c) => c.length === 0));
  const move = whole ?? moves.find((dx) => cuts(dx)[0].length === 0);
  if (move !== undefined) holder.scrollLeft += move;
}

/** One button between the readable size (the box scrolls sideways) and the whole chart in the box's width. */
function setUpFit(holder) {
  const button = $('#chart-fit');
  if (!button) return;
  button.hidden = false;
  button.addEventListener('click', () => {
    const fit = holder.dataset.fit !== 'true';
    holder.dataset.fit = String(fit);
    button.setAttribute('aria-pressed', String(fit));
    button.textContent = fit ? 'Actual size' : 'Fit to width';
  });
}

/** Marks each instance's state node: filled in the instance's colour, with a tag of instance keys above it. */
export function highlightChart() {
  if (!chartReady) return;
  const svg = $('#chart svg');
  if (!svg) return;
  for (const node of svg.querySelectorAll('g.node.active')) {
    node.classList.remove('active');
    node.removeAttribute('data-instances');
    node.removeAttribute('data-color');
  }
  for (const tag of svg.querySelectorAll('g.instance-tag')) tag.remove();
  // Badges go last in the drawing's top group (nodes share its coordinates), so no edge is drawn over them.
  const layer = svg.querySelector('g.graph') ?? svg;
  const byState = new Map();
  for (const inst of [...instances.values()].sort((a, b) => a.key.localeCompare(b.key))) {
    if (!inst.status) continue;
    const list = byState.get(inst.status.state) ?? [];
    list.push(inst);
    byState.set(inst.status.state, list);
  }
  for (const [state, list] of byState) {
    const node = svg.getElementById(NODE_PREFIX + state);
    if (!node) continue;
    node.classList.add('active');
    node.dataset.instances = list.map((i) => i.key).join(' ');
    // The stylesheet maps the colour slot to the instance's colour, as the daemon's first paint marks it.
    node.dataset.color = list[0].card.dataset.color;
    // Badges measured before any is added, so the node's own box places them all.
    const box = node.getBBox();
    let x = box.x;
    for (const inst of list) {
      const tag = document.createElementNS(SVG_NS, 'g');
      tag.setAttribute('class', 'instance-tag');
      const rect = document.createElementNS(SVG_NS, 'rect');
      const text = document.createElementNS(SVG_NS, 'text');
      text.textContent = inst.key;
      text.setAttribute('y', String(box.y - 8));
      rect.setAttribute('fill', inst.color);
      rect.setAttribute('rx', '4');
      tag.append(rect, text);
      layer.append(tag);
      const width = text.getComputedTextLength() + 10;
      text.setAttribute('x', String(x + 5));
      rect.setAttribute('x', String(x));
      rect.setAttribute('y', String(box.y - 22));
      rect.setAttribute('width', String(width));
      rect.setAttribute('height', '18');
      x += width + 4;
    }
  }
}
