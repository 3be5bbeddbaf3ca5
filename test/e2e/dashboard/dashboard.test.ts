/**
 * The dashboard end to end: the real daemon (bin/watchdog) with two demo servers, and headless Chromium.
 * No Admin is configured, so the daemon serves the dashboard to loopback clients only — as this browser is.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Route } from 'playwright-core';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type DaemonCtx, daemonSuite, type RunningDaemon, type StatusJson, waitState } from '../../_support/daemon.ts';
import { freePort, ROOT, waitFor } from '../../_support/env.ts';
import { type Browser, browserSuite, openBrowser, screenshot } from './_support/browser.ts';

const TOKEN = 'tok';
/** A test body given the daemon and the browser the suite started. */
const inPage = (fn: (d: RunningDaemon, b: Browser) => Promise<void>) => (ctx: DaemonCtx & { browser?: Browser }) =>
  fn(ctx.daemon!, ctx.browser!);

const test = browserSuite('e2e :: dashboard in Chromium', (name) =>
  daemonSuite<{ browser?: Browser }>(name, {
    config: async () =>
      testConfig({
        instances: [
          { key: 'alpha', port: await freePort() },
          { key: 'beta', port: await freePort() },
        ],
        extra: '  ResourceSampleSeconds: 0.5',
      }),
    before: async (ctx) => {
      ctx.browser = await openBrowser();
    },
    stopping: (ctx) => ctx.browser?.close(),
  }),
);

const statusOf = (d: RunningDaemon, key: string) => d.status(key, TOKEN);
const inState = (d: RunningDaemon, key: string, state: string, notPid?: number | null) =>
  waitState(d, key, TOKEN, state, { notPid });
/** `promise`, or a rejection naming `what` once `ms` have passed without it settling. */
async function withDeadline<T>(what: string, promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
const card = (key: string) => `article.card[data-key="${key}"]`;
const pillText = (b: Browser, key: string) => b.page.textContent(`${card(key)} .state-pill`);
/** The ids of the chart nodes marked active for `key`. */
const activeNodes = (b: Browser, key: string) =>
  b.page.$$eval(`#chart g.node.active[data-instances~="${key}"]`, (nodes) => nodes.map((n) => n.id));

/** Reads the daemon's own event stream from the test, to learn when a transition happened by the daemon's clock. */
async function watchState(
  d: RunningDaemon,
  key: string,
  state: string,
): Promise<{ at: Promise<number>; close: () => void }> {
  const abort = new AbortController();
  const res = await fetch(`${d.url}/events`, { signal: abort.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const at = (async () => {
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('event stream ended');
      buffer += decoder.decode(value, { stream: true });
      const blocks = buffer.split('\n\n');
      buffer = blocks.pop() ?? ''; // an unfinished message waits for the rest
      for (const block of blocks) {
        if (!block.includes('event: instance:state')) continue;
        const data = JSON.parse(
          block
            .split('\n')
            .find((l) => l.startsWith('data: '))
            ?.slice(6) ?? '{}',
        ) as { key: string; state: string; at: number };
        if (data.key === key && data.state === state) return data.at;
      }
    }
  })();
  void at.catch(() => undefined); // rejects with AbortError once closed
  return { at, close: () => abort.abort() };
}

test(
  'dashboard :: the page loads: both instances, their facts, and the running node highlighted for each',
  inPage(async (d, b) => {
    const [alpha, beta] = [await inState(d, 'alpha', 'server.running'), await inState(d, 'beta', 'server.running')];
    const res = await b.page.goto(`${d.url}/`);
    assert.is(res?.status(), 200);
    await b.page.waitForSelector('#chart svg g.node');
    await waitFor(
      'both cards running',
      async () => (await pillText(b, 'alpha')) === 'server.running' && (await pillText(b, 'beta')) === 'server.running',
      10_000,
    );
    assert.is(await b.page.textContent(`${card('alpha')} [data-field="pid"]`), String(alpha.pid));
    assert.is(await b.page.textContent(`${card('beta')} [data-field="pid"]`), String(beta.pid));
    await waitFor(
      'a check-in age',
      async () => /ago$/.test((await b.page.textContent(`${card('alpha')} [data-field="checkin"]`)) ?? ''),
      10_000,
    );
    // The daemon's samples of the server: CPU, its tree's memory, and the players its /status gives (the demo: 0).
    const field = (name: string) => b.page.textContent(`${card('alpha')} [data-field="${name}"]`);
    await waitFor('CPU, memory and players on the card', async () => (await field('players')) === '0', 15_000);
    assert.match((await field('cpu')) ?? '', /^\d+(\.\d)?%$/);
    assert.match((await field('memory')) ?? '', /^\d+(\.\d)? (MB|GB)( \(\d+ processes\))?$/);
    assert.equal(await activeNodes(b, 'alpha'), ['state:server.running']);
    assert.equal(await activeNodes(b, 'beta'), ['state:server.running']);
    assert.is(await b.page.textContent('#conn'), 'live');
    await screenshot(b.page, 'dashboard-loaded.png');
  }),
);

test(
  "dashboard :: a state change shows as the event stream tells it, with the page's refresh held (stop via the control API)",
  inPage(async (d, b) => {
    // Stamp every change of beta's state pill with the page's clock (same machine, same clock as the daemon).
    await b.page.evaluate(`(() => {
    const seen = (window.seenStates = []);
    const pill = document.querySelector('article.card[data-key="beta"] .state-pill');
    if (!pill) throw new Error('no beta card');
    new MutationObserver(() => seen.push({ state: pill.textContent, t: Date.now() }))
      .observe(pill, { childList: true, characterData: true, subtree: true });
  })()`);
    // The page's 10 s refresh (GET /api/instances) is held unanswered meanwhile: what it shows came over /events.
    const held: Route[] = [];
    await b.page.route('**/api/instances', (route) => void held.push(route));
    const watch = await watchState(d, 'beta', 'stopped.idle');
    try {
      assert.is(await d.control('beta', TOKEN, 'stop'), 200);
      const at = await withDeadline('the daemon reaching stopped.idle', watch.at, 15_000);
      const shown = await waitFor(
        'the page showing stopped.idle',
        () =>
          b.page.evaluate<{ state: string; t: number } | undefined>(
            "window.seenStates.find((s) => s.state === 'stopped.idle')",
          ),
        15_000,
      );
      // Shown from the transition's event, not before it (10 ms for clock rounding); how long after is bounded only
      // by the deadline above (a duration would be a benchmark figure, not a test).
      assert.ok(shown.t >= at - 10, `shown ${at - shown.t} ms before the daemon's transition`);
      assert.equal(await activeNodes(b, 'beta'), ['state:stopped.idle']);
      assert.equal(await activeNodes(b, 'alpha'), ['state:server.running'], 'alpha is untouched');
      assert.is(await b.page.textContent(`${card('beta')} [data-field="pid"]`), '—');
      // The daemon's status says what applies: without UpdateType or a previous build, a stopped instance can only be started (or held).
      const status = (await statusOf(d, 'beta')) as unknown as Record<string, unknown>;
      assert.equal([status.canUpdate, status.canRollback], [false, false]);
      const enabled = () =>
        b.page.evaluate<string[]>(
          `[...document.querySelectorAll('${card('beta')} button[data-action]:not(:disabled)')].map((e) => e.textContent)`,
        );
      // Hold applies to a stopped instance too: it holds its schedules. Stop too, as the machine takes it (it keeps
      // the instance stopped across daemon restarts); the status's controls say so.
      const controls = status.controls as Record<string, { allowed: boolean; reason: string | null }>;
      assert.equal(controls.stop, { allowed: true, reason: null });
      assert.is(controls.rollback?.allowed, false);
      await waitFor(
        'only Start, Hold and Stop enabled on beta',
        async () => ((await enabled()).join() === 'Start,Hold,Stop' ? true : undefined),
        5000,
      );
      const events = await b.page.$$eval('#events li', (lis) => lis.map((li) => li.textContent ?? ''));
      assert.ok(
        events.some((e) => e.includes('beta') && e.includes('stopped.idle')),
        events.slice(0, 5).join(' | '),
      );
    } finally {
      watch.close();
      await b.page.unroute('**/api/instances');
      for (const route of held.splice(0)) await route.continue().catch(() => undefined);
    }
  }),
);

test(
  'dashboard :: the Restart button, once confirmed, restarts the instance (the pid changes)',
  inPage(async (d, b) => {
    const before: StatusJson = await inState(d, 'alpha', 'server.running');
    await b.page.click(`${card('alpha')} button[data-action="restart"]`);
    const dialog = b.page.locator('dialog#confirm');
    await dialog.waitFor({ state: 'visible' });
    assert.is(await b.page.textContent('#confirm-title'), 'Restart alpha?');
    await screenshot(b.page, 'dashboard-confirm.png');
    await b.page.click('#confirm-ok');
    await dialog.waitFor({ state: 'hidden' });
    const after = await inState(d, 'alpha', 'server.running', before.pid);
    assert.is(after.restarts, before.restarts + 1);
    await waitFor(
      'the card showing the new pid',
      async () => (await b.page.textContent(`${card('alpha')} [data-field="pid"]`)) === String(after.pid),
      10_000,
    );
    assert.is(await b.page.textContent(`${card('alpha')} .action-result`), 'restart accepted');
    assert.equal(await activeNodes(b, 'alpha'), ['state:server.running']);
    // The dashboard's request is audited like any control request.
    await waitFor(
      'the audit line',
      async () => {
        const { readFile } = await import('node:fs/promises');
        const lines = (await readFile(join(d.dir, 'logs', 'audit.log'), 'utf8').catch(() => ''))
          .trim()
          .split('\n')
          .filter(Boolean);
        return lines
          .map((l) => JSON.parse(l) as { key: string; action: string; result: string; remote: string | null })
          .find(
            (l) => l.key === 'alpha' && l.action === 'restart' && l.result === 'accepted' && l.remote === '127.0.0.1',
          );
      },
      10_000,
    );
  }),
);

test(
  'dashboard :: screenshot: two instances in different states, logs open',
  inPage(async (d, b) => {
    await inState(d, 'alpha', 'server.running');
    await inState(d, 'beta', 'stopped.idle');
    for (const key of ['alpha', 'beta']) await b.page.click(`${card(key)} details.log summary`);
    await waitFor(
      "log lines in alpha's card",
      async () => ((await b.page.textContent(`${card('alpha')} .log-lines`)) ?? '').split('\n').length > 2,
      10_000,
    );
    assert.equal(b.errors, [], 'no console or page errors');
    const path = await screenshot(b.page, 'dashboard.png');
    // The committed picture in docs/ is refreshed only on request, so test runs leave the work tree clean.
    if (process.env.WATCHDOG_UPDATE_DOCS === '1') {
      await mkdir(join(ROOT, 'docs'), { recursive: true });
      await copyFile(path, join(ROOT, 'docs', 'dashboard.png'));
    }
  }),
);

test.run();
