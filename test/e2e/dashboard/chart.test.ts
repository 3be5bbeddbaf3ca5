/**
 * The statechart SVG the dashboard serves, measured in headless Chromium: no two labels overlap, and the legend
 * names every arrow colour the chart uses.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EDGE_STYLE } from '../../../src/chart/dot-edges.ts';
import { renderChartSvg } from '../../../src/chart/svg.ts';
import { type Browser, openBrowser, screenshot } from './_support/browser.ts';

interface Label {
  text: string;
  group: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

const test = suite<{ browser?: Browser }>('e2e :: the rendered statechart', {});

test.before(async (ctx) => {
  const svg = await renderChartSvg();
  ctx.browser = await openBrowser({ width: 1800, height: 1000 });
  await ctx.browser.page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
});
test.after(async (ctx) => {
  await ctx.browser?.close();
});

test('statechart :: no label overlaps another (arrow labels, state names, the lines listed in states)', async ({
  browser,
}) => {
  const page = browser!.page;
  await screenshot(page, 'statechart.png');
  const labels = await page.$$eval('svg text', (nodes) =>
    nodes.map((t) => {
      const b = (t as unknown as { getBBox(): { x: number; y: number; width: number; height: number } }).getBBox();
      return {
        text: t.textContent ?? '',
        group: t.closest('g[id]')?.id ?? '',
        x: b.x,
        y: b.y,
        w: b.width,
        h: b.height,
      };
    }),
  );
  assert.ok(labels.length > 40, `${labels.length} labels`);
  const overlaps: string[] = [];
  labels.forEach((a: Label, i) => {
    for (const b of labels.slice(i + 1)) {
      if (a.group === b.group) continue; // lines of one label
      const ix = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const iy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      if (ix > 0.5 && iy > 0.5) overlaps.push(`"${a.text}" × "${b.text}"`);
    }
  });
  assert.equal(overlaps, []);
});

test('statechart :: the legend names each arrow colour the chart draws', async ({ browser }) => {
  const page = browser!.page;
  const legend = await page.$$eval('svg g[id="state:legend"] text', (nodes) => nodes.map((t) => t.textContent ?? ''));
  for (const { meaning } of Object.values(EDGE_STYLE)) assert.ok(legend.includes(meaning), meaning);
  // Every arrow but the one marking the initial state.
  const arrowColours = await page.$$eval('svg g.edge', (edges) => [
    ...new Set(
      edges
        .filter((e) => !(e.querySelector('title')?.textContent ?? '').startsWith('__initial'))
        .map((e) => e.querySelector('path')?.getAttribute('stroke') ?? ''),
    ),
  ]);
  const legendColours = Object.values(EDGE_STYLE).map((s) => s.color);
  for (const c of arrowColours) assert.ok(legendColours.includes(c), `arrow colour ${c} is in the legend`);
});

test.run();
