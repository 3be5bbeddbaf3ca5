/** The dashboard page as the daemon renders it (src/http/dashboard/page.ts): cards, buttons and the inlined state. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BUSY_REASONS } from '../../machines/instance.refusals.ts';
import { createBus } from '../../src/bus.ts';
import { OPERATOR_STATES } from '../../src/chart/operator.ts';
import { createApp } from '../../src/http/app.ts';
import type { CardStatus } from '../../src/http/dashboard/assets/card-view.js';
import { colorSlots, escapeHtml, type PageState, renderCard, renderPage } from '../../src/http/dashboard/page.ts';
import { ASSETS_DIR } from '../../src/http/dashboard/routes.ts';
import { crashLoop } from '../machines/_support/harness.ts';
import { fromLoopback, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';
import { machineControls } from './_support/machine-controls.ts';

const test = suite('dashboard :: the page rendered with the instances');

const status = (over: Partial<CardStatus> & { key: string }): CardStatus => ({
  name: over.key,
  state: 'server.running',
  pid: 7,
  revision: 'r1',
  lastCheckinAt: null,
  startedAt: null,
  startupFailures: 0,
  restarts: 0,
  stopRequested: false,
  ...over,
});
/** The page without events, with a stand-in chart: these tests are about the cards. */
const renderBare = (html: string, state: Omit<PageState, 'recent'>) =>
  renderPage(html, { ...state, recent: [] }, { svg: '<svg viewBox="0 0 10 10"></svg>' });
const index = () => readFile(join(ASSETS_DIR, 'index.html'), 'utf8');
const cardOf = (html: string, key: string) =>
  /<article class="card"[^>]*>[\s\S]*?<\/article>/g.exec(html.slice(html.indexOf(`data-key="${key}"`) - 30))?.[0] ?? '';
const buttonOf = (card: string, action: string) =>
  new RegExp(`<button[^>]*data-action="${action}"[^>]*>[^<]*</button>`).exec(card)?.[0] ?? '';

test('dashboard-page :: GET / carries every instance card, sorted by key, with its facts', async () => {
  const app = fromLoopback(
    createApp({
      registry: memoryRegistry(
        memoryInstance('zeta', { apiToken: 't' }),
        memoryInstance('alpha', { apiToken: 't', state: 'stopped.idle' }),
      ),
      bus: createBus(),
      log: recordingLogger(),
      version: '1.2.3',
    }),
  );
  const res = await app.request('/');
  assert.is(res.status, 200);
  const html = await res.text();
  assert.ok(html.indexOf('data-key="alpha"') < html.indexOf('data-key="zeta"'), 'alpha first');
  assert.match(cardOf(html, 'zeta'), '<dd data-field="pid">4242</dd>');
  assert.match(
    cardOf(html, 'alpha'),
    // Its tooltip is the state's name in the operator's view of the chart.
    `<span class="state-pill" data-field="state" data-group="stopped" title="${escapeHtml(OPERATOR_STATES['stopped.idle'] ?? '')}">stopped.idle</span>`,
  );
  assert.match(html, '<span id="version" class="muted">v1.2.3</span>');
  assert.not.match(html, 'connecting…');
  assert.match(html, '<script type="application/json" id="initial-state">');
  assert.equal(await (await app.request('/', { method: 'HEAD' })).text(), '');
});

test("dashboard-page :: a running server's CPU, memory and players are on its card from the first paint; dashes when unknown", async () => {
  const template = await index();
  const at = '2024-05-01T12:00:00.000Z';
  const sampled = status({
    key: 'alpha',
    resources: { cpuPercent: 12.4, cpuSeconds: 30, rssBytes: 1.5e9, processes: 3, at },
    players: 17,
  });
  const card = renderCard(template, sampled, 0, Date.parse(at));
  assert.match(card, '<dd data-field="cpu">12%</dd>');
  assert.match(card, '<dd data-field="memory">1.5 GB (3 processes)</dd>');
  assert.match(card, '<dd data-field="players">17</dd>');
  const low = renderCard(
    template,
    { ...sampled, resources: { cpuPercent: 0.44, cpuSeconds: 1, rssBytes: 300e6, processes: 1, at } },
    0,
    Date.parse(at),
  );
  assert.match(low, '<dd data-field="cpu">0.4%</dd>');
  assert.match(low, '<dd data-field="memory">300 MB</dd>');
  const none = renderCard(template, status({ key: 'beta', pid: null, resources: null, players: null }), 0, 0);
  for (const field of ['cpu', 'memory', 'players']) assert.match(none, `<dd data-field="${field}">—</dd>`);
});

test('dashboard-page :: buttons: each control action enabled or refused as the machine says, with its reason', async () => {
  const stopped = await machineControls(() => {}, { canUpdate: false, canRollback: false });
  const running = await machineControls((h) => h.run());
  const backoff = await machineControls((h) => crashLoop(h));
  const html = renderBare(await index(), {
    version: '1',
    now: Date.now(),
    instances: [
      status({ key: 'a', pid: null, ...stopped }),
      status({ key: 'b', ...running }),
      status({ key: 'c', ...backoff }),
    ],
  });
  const a = cardOf(html, 'a');
  assert.match(buttonOf(a, 'restart'), />Start</);
  assert.not.match(buttonOf(a, 'restart'), 'disabled');
  // The machine takes a stop of a stopped instance (it is remembered across daemon restarts), so the button does.
  assert.not.match(buttonOf(a, 'stop'), 'disabled');
  assert.match(buttonOf(a, 'rollback'), ` disabled title="${escapeHtml(stopped.controls.rollback.reason ?? '')}"`);
  assert.match(buttonOf(a, 'rollback'), 'bin.prev');
  assert.match(buttonOf(a, 'update'), /disabled title="no update provider: UpdateType/);
  const b = cardOf(html, 'b');
  for (const action of ['restart', 'update', 'rollback', 'stop'])
    assert.not.match(buttonOf(b, action), 'disabled', action);
  assert.match(buttonOf(b, 'restart'), />Restart</);
  assert.is(backoff.state, 'restarting.backoff');
  assert.match(buttonOf(cardOf(html, 'c'), 'rollback'), ` disabled title="${BUSY_REASONS['backing-off']}"`);
});

test('dashboard-page :: buttons during an update and a rollback, and after shutdown: the machine decides, not the page', async () => {
  const updating = await machineControls((h) => void h.actor.send({ type: 'START' }));
  const rolling = await machineControls((h) => void h.actor.send({ type: 'ROLLBACK' }));
  const exited = await machineControls((h) => void h.actor.send({ type: 'SHUTDOWN', persist: false }));
  assert.equal([updating.state, rolling.state, exited.state], ['updating', 'rolling-back', 'exited']);
  const html = renderBare(await index(), {
    version: '1',
    now: Date.now(),
    instances: [status({ key: 'u', ...updating }), status({ key: 'r', ...rolling }), status({ key: 'x', ...exited })],
  });
  const enabled = (key: string) =>
    ['restart', 'update', 'rollback', 'stop'].filter((a) => !buttonOf(cardOf(html, key), a).includes('disabled'));
  // During an install the machine takes a Restart (it withdraws a Stop given meanwhile); the page used to refuse it.
  assert.equal(enabled('u'), ['restart', 'update', 'stop']);
  assert.match(buttonOf(cardOf(html, 'u'), 'rollback'), ` disabled title="${BUSY_REASONS.installing}"`);
  assert.equal(enabled('r'), ['update', 'stop']);
  assert.match(buttonOf(cardOf(html, 'r'), 'restart'), ` disabled title="${BUSY_REASONS['rolling-back']}"`);
  assert.equal(enabled('x'), []);
  assert.match(buttonOf(cardOf(html, 'x'), 'stop'), BUSY_REASONS['shutting-down']);
});

test('dashboard-page :: the card shows what the status says: another answer in controls, another button', async () => {
  const refused = { allowed: false, reason: 'a reason only the daemon knows' };
  const taken = { allowed: true, reason: null };
  const controls = { restart: refused, update: taken, stop: taken, rollback: taken, restore: taken };
  const card = renderCard(await index(), status({ key: 'a', controls }), 0, 0);
  assert.match(buttonOf(card, 'restart'), ' disabled title="a reason only the daemon knows"');
  const flipped = renderCard(
    await index(),
    status({ key: 'a', controls: { ...controls, restart: taken, stop: refused } }),
    0,
    0,
  );
  assert.not.match(buttonOf(flipped, 'restart'), 'disabled');
  assert.match(buttonOf(flipped, 'stop'), ' disabled title="a reason only the daemon knows"');
  // From a daemon that sends no controls, every control button is left to the daemon to refuse.
  const older = renderCard(await index(), status({ key: 'a', state: 'updating' }), 0, 0);
  for (const action of ['restart', 'update', 'rollback', 'stop'])
    assert.not.match(buttonOf(older, action), 'disabled', action);
});

test('dashboard-page :: names are escaped, and no text can close the inlined JSON', async () => {
  const evil = '</script><script>alert(1)</script><img src=x onerror=alert(2)>';
  const html = renderBare(await index(), {
    version: '1',
    now: Date.now(),
    instances: [status({ key: 'k', name: evil })],
  });
  assert.not.match(html, '<img src=x');
  assert.not.match(html, '<script>alert');
  const json = /<script type="application\/json" id="initial-state">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
  assert.is((JSON.parse(json) as { instances: CardStatus[] }).instances[0]?.name, evil);
});

test('dashboard-page :: colours: a slot per key in key order, the same for the same keys', () => {
  assert.equal(
    [...colorSlots(['b', 'a', 'c'])],
    [
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ],
  );
  const many = colorSlots(Array.from({ length: 8 }, (_, i) => `k${i}`));
  assert.is(many.get('k6'), 0, 'wraps around the palette');
});

test('dashboard-page :: a template that no longer has a field the renderer fills is an error, not a silently blank card', () => {
  assert.throws(
    () =>
      renderBare('<template id="instance-card"><article class="card"></article></template>', {
        version: '1',
        now: 0,
        instances: [status({ key: 'x' })],
      }),
    /matched 0 times/,
  );
});

test('dashboard-page :: the recent events are listed newest first, in UTC, escaped, each key in its card colour', async () => {
  const at = Date.UTC(2026, 0, 2, 3, 4, 5);
  const html = renderPage(
    await index(),
    {
      version: '1',
      now: at,
      instances: [status({ key: 'a-rather-long-instance-key' })],
      recent: [
        {
          type: 'instance:state',
          event: { key: 'a-rather-long-instance-key', state: 'server.running', previous: 'server.starting', at },
        },
        {
          type: 'instance:alert',
          event: { key: '<b>', kind: 'crash', message: '<img src=x onerror=1>', at: at + 1000 },
        },
      ],
    },
    { svg: '<svg viewBox="0 0 10 10"></svg>' },
  );
  const list = /<ol id="events"[^>]*>([\s\S]*?)<\/ol>/.exec(html)?.[1] ?? '';
  const rows = list.match(/<li[\s\S]*?<\/li>/g) ?? [];
  assert.is(rows.length, 2);
  assert.match(rows[0] ?? '', 'alert (crash): &lt;img src=x onerror=1&gt;');
  assert.match(rows[0] ?? '', '<time datetime="2026-01-02T03:04:06.000Z">03:04:06</time>');
  assert.match(rows[0] ?? '', '<span class="event-key">&lt;b&gt;</span>', 'no card, no colour');
  assert.match(rows[1] ?? '', '<span class="event-key" data-color="0">a-rather-long-instance-key</span>');
  assert.match(rows[1] ?? '', 'state server.starting → server.running');
  assert.not.match(html, '<img src=x');
  const json = /<script type="application\/json" id="initial-state">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
  assert.is((JSON.parse(json) as PageState).recent.length, 2, 'the page relists them in local time');
});

test('dashboard-page :: the statechart is in the page at its readable size, each instance state marked in its colour', async () => {
  const svg =
    '<svg viewBox="0.00 0.00 1905.00 936.00"><g id="state:server.running" class="node"><text>server.running</text></g>' +
    '<g id="state:stopped.idle" class="node"><text>idle</text></g></svg>';
  const html = renderPage(
    await index(),
    {
      version: '1',
      now: 0,
      recent: [],
      instances: [status({ key: 'b' }), status({ key: 'a' }), status({ key: 'c', state: 'updating' })],
    },
    { svg },
  );
  const chart = /<div id="chart"[^>]*>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';
  assert.match(chart, '<svg width="2286" height="1123" viewBox="0.00 0.00 1905.00 936.00">');
  assert.match(chart, '<g id="state:server.running" class="node active" data-color="0" data-instances="a b">');
  assert.match(chart, '<g id="state:stopped.idle" class="node">', 'no instance there');
  const failed = renderPage(
    await index(),
    { version: '1', now: 0, recent: [], instances: [] },
    { error: 'Graphviz failed <x>' },
  );
  assert.match(failed, 'The statechart could not be drawn (Graphviz failed &lt;x&gt;).');
});

test('dashboard-page :: the card shows the hub listing and the last backup, rows hidden without them', async () => {
  const at = Date.parse('2026-11-28T06:00:00.000Z');
  const hub = {
    address: 'ss14://example.org:1212',
    hubs: [
      {
        hub: 'https://hub.one/',
        listed: true,
        missingSince: null,
        lastError: null,
        checkedAt: '2026-11-28T05:59:50.000Z',
      },
      {
        hub: 'https://hub.two/',
        listed: false,
        missingSince: '2026-11-28T05:48:00.000Z',
        lastError: 'the hub refused the advertisement: [400] bad address',
        checkedAt: '2026-11-28T05:59:50.000Z',
      },
    ],
  };
  const backup = {
    at: '2026-11-28T05:55:00.000Z',
    ok: true,
    kind: 'scheduled',
    id: 'x',
    archiveBytes: 2000,
    error: null,
    lastSuccessAt: '2026-11-28T05:55:00.000Z',
  };
  const card = renderCard(await index(), status({ key: 'a', hub, backup }), 0, at);
  assert.match(card, '<div data-row="hub">');
  assert.match(
    card,
    '<dd data-field="hub">listed by https://hub.one/; missing from https://hub.two/ for 12 min: the hub refused the advertisement: [400] bad address</dd>',
  );
  assert.match(card, '<dd data-field="backup">scheduled 2 kB, 5 min 0 s ago</dd>');
  const plain = renderCard(await index(), status({ key: 'b' }), 0, at);
  assert.match(plain, '<div data-row="hub" hidden>');
  assert.match(plain, '<dd data-field="backup">—</dd>');
});

test.run();
