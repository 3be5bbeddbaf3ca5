/**
 * The dashboard's layout in headless Chromium at 360, 1024 and 1600 px with 1, 3 and 30 instances (the real HTTP
 * app on a loopback socket, in-memory instances): nothing wider than the window, every button inside its card, no
 * two cards overlapping, no hole beside a card; the first paint (no script run) has the events and the statechart;
 * the chart keeps readable labels without widening the page; a long server-log line wraps. With TEST_SCREENSHOTS=1,
 * screenshots of every size land in test-artifacts/layout/.
 */
import * as assert from 'uvu/assert';
import { createBus } from '../../../src/bus.ts';
import type { InstanceControl, InstanceRegistry } from '../../../src/supervisor/contract.ts';
import { waitFor } from '../../_support/env.ts';
import { memoryInstance } from '../../http/_support/app.ts';
import { appSuite, onPage } from './_support/app-suite.ts';
import { type Browser, screenshot, untilLive, withoutScripts } from './_support/browser.ts';
import { measureLayout } from './_support/layout-checks.ts';

/** A key as long as operators write them, with no place to break it, so a cut key or a tight card shows. */
const LONG_KEY = 'lrp_eu_west_main_1';
const at = Date.parse('2026-01-01T00:00:00.000Z');

function instance(key: string, i: number): InstanceControl {
  const inst = memoryInstance(key, { apiToken: 't', state: i % 3 === 1 ? 'stopped.idle' : 'server.running' });
  const status = inst.status;
  inst.status = () => ({
    ...status(),
    name: `Wizard's Den ${key} — a long server name from the config`,
    startedAt: '2025-12-30T21:13:00.000Z',
    lastExit: {
      reason: 'launch-failed',
      code: null,
      signal: null,
      detail: 'cannot launch /srv/ss14/instances/main/bin/Robust.Server (ENOENT): check RunCommand',
      at: '2025-12-31T23:59:00.000Z',
    },
  });
  return inst;
}

const keys = (n: number) => [
  LONG_KEY,
  ...Array.from({ length: n - 1 }, (_, i) => `s${String(i + 1).padStart(2, '0')}`),
];
const shown = new Map<string, InstanceControl>();
const registry: InstanceRegistry = { get: (k) => shown.get(k), list: () => [...shown.values()] };
function show(n: number) {
  shown.clear();
  for (const [i, k] of keys(n).entries()) shown.set(k, instance(k, i));
}

const test = appSuite('e2e :: dashboard layout at 360, 1024 and 1600 px', {
  ctx: { bus: createBus() },
  viewport: { width: 1600, height: 900 },
  deps: (ctx) => ({ registry, bus: ctx.bus }),
  before: ({ bus }) => {
    show(3);
    // Listed facts the first paint and `hello` carry (the page's recorder starts with the app).
    bus.emit('instance:state', { key: LONG_KEY, state: 'server.running', previous: 'server.starting', at });
    bus.emit('instance:alert', { key: 's01', kind: 'crash', message: 'the server exited with code 1', at: at + 1000 });
    bus.emit('instance:control', {
      key: LONG_KEY,
      action: 'restart',
      result: 'accepted',
      status: 202,
      user: 'admin',
      remote: '127.0.0.1',
      at: at + 2000,
    });
  },
});

const live = (b: Browser) => untilLive(b, undefined, 15_000);

for (const count of [1, 3, 30]) {
  test(`layout :: ${count} instance(s) at 360, 1024 and 1600 px: nothing overflows, overlaps or leaves a hole`, async ({
    server,
    browser,
  }) => {
    const b = browser!;
    show(count);
    for (const width of [360, 1024, 1600]) {
      await b.page.setViewportSize({ width, height: 900 });
      await b.page.goto(`${server!.url}/`);
      await live(b);
      assert.is(await b.page.locator('#instances > .card').count(), count);
      await screenshot(b.page, `layout/dashboard-${count}-${width}.png`);
      const report = await measureLayout(b.page);
      assert.equal(report.problems, [], `${count} at ${width} px`);
      assert.ok(report.scrollWidth <= width, `${report.scrollWidth} <= ${width}`);
    }
    assert.equal(b.errors, []);
  });
}

test(
  'layout :: the first paint, before any script runs, has the recent events and the statechart',
  onPage(async ({ b, url }) => {
    show(3);
    const html = await (await fetch(url)).text();
    const events = /<ol id="events"[^>]*>([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? '';
    assert.is(events.match(/<li /g)?.length, 3, 'three listed events');
    assert.match(events, `<span class="event-key" data-color="0">${LONG_KEY}</span>`);
    assert.match(/<div id="chart"[^>]*>([\s\S]*?)<\/div>\s*<\/section>/.exec(html)?.[1] ?? '', /<svg width="\d+"/);

    await withoutScripts(b, async () => {
      await b.page.setViewportSize({ width: 1024, height: 900 });
      await b.page.goto(url, { waitUntil: 'load' });
      await screenshot(b.page, 'layout/dashboard-first-paint-1024.png');
      assert.is(await b.page.locator('#events li').count(), 3);
      assert.not.match((await b.page.textContent('main')) ?? '', 'Waiting for events');
      const chart = await b.page.locator('#chart svg').boundingBox();
      assert.ok(chart && chart.height > 300, `the chart is drawn: ${JSON.stringify(chart)}`);
      // Both running instances' state is marked before any script ran.
      assert.is(
        await b.page.getAttribute('#chart g.node.active[id="state:server.running"]', 'data-instances'),
        `${LONG_KEY} s02`,
      );
      assert.equal((await measureLayout(b.page)).problems, []);
    });
  }),
);

test(
  'layout :: the statechart keeps readable labels in a box that scrolls, and fits the width on request',
  onPage(async ({ b, url }) => {
    await b.page.setViewportSize({ width: 1024, height: 900 });
    await b.page.goto(url);
    await live(b);
    const smallest = () =>
      b.page.$$eval('#chart svg text', (ts) => Math.min(...ts.map((t) => t.getBoundingClientRect().height)));
    const box = () =>
      b.page.$eval('#chart', (c) => ({
        scroll: c.scrollWidth,
        client: c.clientWidth,
        svg: c.querySelector('svg')!.getBoundingClientRect().width,
      }));
    assert.ok((await smallest()) >= 10, `the smallest label is ${await smallest()} px tall`);
    const actual = await box();
    assert.ok(actual.scroll > actual.client, `the chart scrolls inside its box: ${JSON.stringify(actual)}`);
    assert.ok(await b.page.evaluate('document.scrollingElement.scrollWidth <= innerWidth'), 'not the page');
    await b.page.click('#chart-fit');
    const fitted = await box();
    assert.ok(Math.abs(fitted.svg - fitted.client) < 2, `fitted: ${JSON.stringify(fitted)}`);
    assert.is(await b.page.textContent('#chart-fit'), 'Actual size');
    await screenshot(b.page, 'layout/dashboard-chart-fitted-1024.png');
  }),
);

test(
  "layout :: at 1280 px the statechart opens on the running state, no label cut at its box's left edge",
  onPage(async ({ b, url }) => {
    await b.page.setViewportSize({ width: 1280, height: 900 });
    await b.page.goto(url);
    await live(b);
    await screenshot(b.page, 'layout/dashboard-chart-1280.png');
    const seen = await b.page.$eval('#chart', (c) => {
      const view = c.getBoundingClientRect();
      const state = c.querySelector('g.node.active')!.getBoundingClientRect();
      const cut = [...c.querySelectorAll('svg text')]
        .filter((t) => {
          const r = t.getBoundingClientRect();
          return r.left < view.left && r.right > view.left;
        })
        .map((t) => t.textContent);
      return {
        scrolls: c.scrollWidth > c.clientWidth,
        inView: state.left >= view.left && state.right <= view.right,
        cut,
      };
    });
    assert.ok(seen.scrolls, 'at readable size the chart is wider than its box');
    assert.ok(seen.inView, 'the running state is in view');
    assert.equal(seen.cut, [], 'no label cut at the left edge');
  }),
);

test('layout :: a long server-log line wraps inside the card at 360 px; nothing is cut or widens the page', async ({
  server,
  browser,
  bus,
}) => {
  const b = browser!;
  show(1);
  await b.page.setViewportSize({ width: 360, height: 900 });
  await b.page.goto(`${server!.url}/`);
  await live(b);
  const card = `article.card[data-key="${LONG_KEY}"]`;
  await b.page.click(`${card} details.log summary`);
  const line = `[INFO] ${'word '.repeat(60)}${'x'.repeat(200)} END`;
  bus.emit('instance:log', { key: LONG_KEY, stream: 'stdout', line, at: Date.now() });
  await waitFor(
    'the line',
    async () => ((await b.page.textContent(`${card} .log-lines`)) ?? '').includes('END') || undefined,
    15_000,
  );
  const pre = await b.page.evaluate<{ scroll: number; client: number; lines: number }>(`(() => {
    const el = document.querySelector(${JSON.stringify(`${card} .log-lines`)});
    const lineHeight = parseFloat(getComputedStyle(el).lineHeight);
    return { scroll: el.scrollWidth, client: el.clientWidth, lines: Math.round(el.scrollHeight / lineHeight) };
  })()`);
  assert.ok(pre.scroll <= pre.client, `no sideways overflow: ${JSON.stringify(pre)}`);
  assert.ok(pre.lines > 5, `the line takes several lines: ${JSON.stringify(pre)}`);
  await screenshot(b.page, 'layout/dashboard-log-360.png');
  assert.equal((await measureLayout(b.page)).problems, []);
  // The Backups panel open too (its instance keeps no backups here: the answer is said in the panel).
  await b.page.click(`${card} details.backups summary`);
  await b.page.waitForSelector(`${card} .backup-result:not(:empty)`);
  assert.equal((await measureLayout(b.page)).problems, [], 'with the Backups panel open');
});

test.run();
