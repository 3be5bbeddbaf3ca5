/**
 * The dashboard's page logic in headless Chromium, against the real HTTP app on a loopback socket with an in-memory
 * registry, so facts can be put on the bus exactly: update progress, the confirmation dialog, live server log lines
 * (shown as text, never markup), refusals, and Admin credentials.
 */
import * as assert from 'uvu/assert';
import { createBus } from '../../../src/bus.ts';
import type { AdminCredentials } from '../../../src/http/account-access.ts';
import { waitFor } from '../../_support/env.ts';
import { basic, memoryInstance, memoryRegistry } from '../../http/_support/app.ts';
import { appSuite } from './_support/app-suite.ts';
import { type Browser, screenshot, untilLive } from './_support/browser.ts';

const test = appSuite('e2e :: dashboard page logic in Chromium', {
  ctx: {
    bus: createBus(),
    alpha: memoryInstance('alpha', { apiToken: 't' }),
    beta: memoryInstance('beta', { state: 'stopped.idle' }), // no ApiToken: control refused
    admin: undefined as AdminCredentials | undefined,
  },
  viewport: { width: 1280, height: 900 },
  deps: (ctx) => ({ registry: memoryRegistry(ctx.alpha, ctx.beta), bus: ctx.bus, admin: () => ctx.admin }),
  before: async ({ browser, server }) => {
    await browser!.page.goto(`${server!.url}/`);
    await browser!.page.waitForSelector('#chart svg g.node.active');
    await untilLive(browser!);
  },
});

const card = (key: string) => `article.card[data-key="${key}"]`;
const text = async (b: Browser, sel: string) => (await b.page.textContent(sel)) ?? '';
const until = (what: string, check: () => Promise<boolean>) =>
  waitFor(what, async () => (await check()) || undefined, 10_000);

test('ui :: version, both cards and the chart with each instance on its own node', async ({ browser }) => {
  const b = browser!;
  assert.is(await text(b, '#version'), 'v9.9.9');
  assert.is(await text(b, `${card('alpha')} .state-pill`), 'server.running');
  assert.is(await text(b, `${card('beta')} .state-pill`), 'stopped.idle');
  assert.equal(await b.page.$$eval('#chart g.instance-tag', (tags) => tags.map((t) => t.textContent).sort()), [
    'alpha',
    'beta',
  ]);
});

test('ui :: a download shows a progress bar that follows bytes/total, then the installed revision', async ({
  bus,
  browser,
}) => {
  const b = browser!;
  const box = `${card('alpha')} .update`;
  const at = Date.now();
  bus.emit('instance:update', { key: 'alpha', phase: 'check', revision: 'r1', at });
  await until('the update box', async () => b.page.isVisible(box));
  bus.emit('instance:update', { key: 'alpha', phase: 'download', bytes: 250_000, total: 1_000_000, at });
  await until('25 %', async () => (await b.page.$eval(`${box} progress`, (p) => p.getAttribute('value'))) === '0.25');
  assert.is(await text(b, `${box} .update-label`), 'downloading 250 kB of 1 MB');
  await screenshot(b.page, 'dashboard-update-progress.png');
  bus.emit('instance:update', { key: 'alpha', phase: 'download', bytes: 3_000_000, total: null, at });
  await until(
    'indeterminate without a total',
    async () => (await b.page.$eval(`${box} progress`, (p) => p.hasAttribute('value'))) === false,
  );
  assert.is(await text(b, `${box} .update-label`), 'downloading 3 MB');
  bus.emit('instance:update', { key: 'alpha', phase: 'done', revision: 'r2', durationMs: 1200, at });
  await until('done', async () => (await text(b, `${box} .update-label`)) === 'update installed: r2');
  const events = await b.page.$$eval('#events li', (lis) => lis.map((li) => li.textContent ?? ''));
  assert.ok(
    events.some((e) => e.includes('update done (r2)')),
    events.join(' | '),
  );
  assert.not.ok(
    events.some((e) => e.includes('update download')),
    'progress is not listed event by event',
  );
});

test('ui :: Cancel in the confirmation dialog does nothing; confirming calls control()', async ({ alpha, browser }) => {
  const b = browser!;
  alpha.calls.length = 0;
  await b.page.click(`${card('alpha')} button[data-action="stop"]`);
  await b.page.locator('dialog#confirm').waitFor({ state: 'visible' });
  assert.is(await text(b, '#confirm-title'), 'Stop alpha?');
  await b.page.click('#confirm-cancel');
  await b.page.locator('dialog#confirm').waitFor({ state: 'hidden' });
  assert.equal(alpha.calls, []);
  await b.page.click(`${card('alpha')} button[data-action="stop"]`);
  await b.page.click('#confirm-ok');
  await until('control:stop', async () => alpha.calls.includes('control:stop'));
  await until('the result', async () => (await text(b, `${card('alpha')} .action-result`)) === 'stop accepted');
  // The confirmed stop is the marker: a call the cancelled dialog had made would have come before it.
  assert.equal(alpha.calls, ['control:stop'], 'the cancelled dialog called nothing');
});

test('ui :: a refused action shows why (instance without ApiToken)', async ({ beta, browser }) => {
  const b = browser!;
  await b.page.click(`${card('beta')} button[data-action="restart"]`);
  await b.page.click('#confirm-ok');
  await until('the refusal', async () => (await text(b, `${card('beta')} .action-result`)).includes('refused (403)'));
  assert.match(await text(b, `${card('beta')} .action-result`), 'no ApiToken');
  assert.equal(beta.calls, []);
  b.errors.length = 0; // the deliberate 403
});

test('ui :: server log lines stream in as plain text, never as markup', async ({ bus, browser }) => {
  const b = browser!;
  await b.page.click(`${card('alpha')} details.log summary`);
  const evil = '<img src=x onerror="window.pwned = 1"><b>bold</b>';
  bus.emit('instance:log', { key: 'alpha', stream: 'stdout', line: 'plain line', at: Date.now() });
  bus.emit('instance:log', { key: 'alpha', stream: 'stderr', line: evil, at: Date.now() });
  await until('the lines', async () => (await text(b, `${card('alpha')} .log-lines`)).includes(evil));
  assert.ok((await text(b, `${card('alpha')} .log-lines`)).includes('plain line'));
  assert.is(await b.page.$$eval(`${card('alpha')} .log-lines *`, (els) => els.length), 0, 'no elements inside the log');
  assert.is(await b.page.evaluate('window.pwned'), undefined);
});

test('ui :: state and alert facts update the card, the chart and the event list', async ({ bus, alpha, browser }) => {
  const b = browser!;
  alpha.state = 'server.awaiting-checkin';
  bus.emit('instance:state', {
    key: 'alpha',
    state: 'server.awaiting-checkin',
    previous: 'server.running',
    at: Date.now(),
  });
  bus.emit('instance:alert', {
    key: 'alpha',
    kind: 'hang',
    message: 'Server `alpha` stopped checking in',
    at: Date.now(),
  });
  await until('the pill', async () => (await text(b, `${card('alpha')} .state-pill`)) === 'server.awaiting-checkin');
  assert.is(
    await b.page.getAttribute(`${card('alpha')} .state-pill`, 'title'),
    'check-in overdue',
    "the operator's name",
  );
  assert.equal(await b.page.$$eval('#chart g.node.active[data-instances~="alpha"]', (n) => n.map((x) => x.id)), [
    'state:server.awaiting-checkin',
  ]);
  await until('the alert', async () =>
    (await text(b, '#events li[data-type="instance:alert"]')).includes('stopped checking in'),
  );
  assert.equal(browser!.errors, []);
});

test("ui :: the chart shows the operator's view; the button swaps in the developer's and back, instances still marked", async ({
  browser,
}) => {
  const b = browser!;
  const chartText = () => b.page.$$eval('#chart svg text', (ts) => ts.map((t) => t.textContent ?? ''));
  const marked = () =>
    b.page.$$eval('#chart g.node.active', (ns) => ns.map((n) => `${n.id} ${n.getAttribute('data-instances')}`));
  assert.is(await b.page.getAttribute('#chart', 'data-view'), 'operator');
  assert.ok((await chartText()).includes('backing off after crashes'), 'plain names');
  assert.not.ok((await chartText()).includes('updateCheck'), 'no update-check region');
  const before = await marked();
  assert.ok(before.length > 0, 'an instance is marked');
  assert.is(await text(b, '#chart-view'), 'Developer chart');
  await b.page.click('#chart-view');
  await until('the developer chart', async () => (await b.page.getAttribute('#chart', 'data-view')) === 'developer');
  assert.ok((await chartText()).includes('updateCheck'), 'every region');
  assert.equal(await marked(), before, 'the same states marked');
  assert.is(await b.page.getAttribute('#chart-view', 'aria-pressed'), 'true');
  await screenshot(b.page, 'dashboard-developer-chart.png');
  await b.page.click('#chart-view');
  await until('the operator view again', async () => (await b.page.getAttribute('#chart', 'data-view')) === 'operator');
  assert.equal(await marked(), before);
  assert.is(await b.page.getAttribute('#chart-developer-link', 'href'), '/statechart.svg?view=developer');
  assert.equal(b.errors, []);
});

test('ui :: with Admin configured the page needs the credentials, and works with them', async (ctx) => {
  const b = ctx.browser!;
  ctx.admin = { username: 'ops', password: 'secret' };
  try {
    // Chromium answers a 401 challenge it holds no credentials for with a network error, so ask from here.
    const refused = await fetch(`${ctx.server!.url}/`);
    assert.is(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', 'Basic');
    await b.page.setExtraHTTPHeaders({ authorization: basic('ops', 'secret') });
    const ok = await b.page.goto(`${ctx.server!.url}/`);
    assert.is(ok?.status(), 200);
    await b.page.waitForSelector('#chart svg g.node.active');
    await until('live over SSE with credentials', async () => (await text(b, '#conn')) === 'live');
    assert.is(await text(b, `${card('alpha')} .state-pill`), 'server.awaiting-checkin');
  } finally {
    ctx.admin = undefined;
    await b.page.setExtraHTTPHeaders({});
  }
  assert.equal(b.errors, []);
});

test.run();
