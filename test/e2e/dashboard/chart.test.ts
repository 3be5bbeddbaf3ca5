import { suite } from 'uvu';
/**
 * The statechart SVGs the dashboard serves (the operator's view and the developer's), measured in headless Chromium:
 * no two labels overlap, and the legend names every arrow colour the chart uses.
 */
import * as assert from 'uvu/assert';
import { EDGE_STYLE } from '../../../src/chart/dot.ts';
import { type ChartView, OPERATOR_LEGEND } from '../../../src/chart/operator.ts';
import { renderChartSvg } from '../../../src/chart/render.ts';
import { type Browser, browserSuite, openBrowser, screenshot } from './_support/browser.ts';

interface Label {
  text: string;
  group: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** What each view's legend says of each arrow colour. */
const LEGENDS: Record<ChartView, Record<string, string>> = {
  developer: Object.fromEntries(Object.entries(EDGE_STYLE).map(([k, s]) => [k, s.meaning])),
  operator: OPERATOR_LEGEND,
};

const test = browserSuite('e2e :: the rendered statechart', (name) => suite<{ browser?: Browser }>(name, {}));

test.before(async (ctx) => {
  ctx.browser = await openBrowser({ width: 1800, height: 1000 });
});
test.after(async (ctx) => {
  await ctx.browser?.close();
});

for (const view of ['operator', 'developer'] as const) {
  const show = async (browser: Browser) => {
    const svg = await renderChartSvg(undefined, view);
    await browser.page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
  };

  test(`statechart :: ${view} view: no label overlaps another (arrow labels, state names, the lines listed in states)`, async ({
    browser,
  }) => {
    const page = browser!.page;
    await show(browser!);
    await screenshot(page, view === 'developer' ? 'statechart.png' : 'statechart-operator.png');
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
    assert.ok(labels.length > 30, `${labels.length} labels`);
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

  test(`statechart :: ${view} view: the legend names each arrow colour the chart draws`, async ({ browser }) => {
    const page = browser!.page;
    await show(browser!);
    const legend = await page.$$eval('svg g[id="state:legend"] text', (nodes) => nodes.map((t) => t.textContent ?? ''));
    const meanings = LEGENDS[view];
    const arrowColours = await page.$$eval('svg g.edge', (edges) => [
      // Every arrow but the one marking the initial state.
      ...new Set(
        edges
          .filter((e) => !(e.querySelector('title')?.textContent ?? '').startsWith('__initial'))
          .map((e) => e.querySelector('path')?.getAttribute('stroke') ?? ''),
      ),
    ]);
    for (const c of arrowColours) {
      const kind = Object.entries(EDGE_STYLE).find(([, s]) => s.color === c)?.[0];
      assert.ok(kind, `arrow colour ${c} is one of the legend's`);
      assert.ok(legend.includes(meanings[kind] ?? ''), `the legend says what ${c} means: ${meanings[kind]}`);
    }
  });
}

test.run();
