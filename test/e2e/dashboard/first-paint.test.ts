/**
 * The dashboard's first response and its buttons in headless Chromium, against the real HTTP app with an in-memory
 * registry: the page shows the instances before any script runs (a plain `chromium --headless --screenshot`), and
 * each button is enabled only where the machine takes its action (the status's `controls`: an instance without a
 * previous build cannot be rolled back, one without an update provider cannot be updated).
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as assert from 'uvu/assert';
import { tempDir, waitFor } from '../../_support/env.ts';
import { type MemoryInstance, memoryInstance, memoryRegistry } from '../../http/_support/app.ts';
import { machineControls } from '../../http/_support/machine-controls.ts';
import { appSuite, onPage } from './_support/app-suite.ts';
import { ARTIFACTS, type Browser, SYSTEM_CHROMIUM, screenshot, untilLive, withoutScripts } from './_support/browser.ts';

/** A memory instance whose status carries the fields the buttons read (`controls`, from a real machine). */
function withStatus(inst: MemoryInstance, extra: Record<string, unknown>): MemoryInstance {
  const status = inst.status;
  inst.status = () => ({ ...status(), ...extra });
  return inst;
}

/** The machine's answers in a state, without the state (the memory instance's own `state` is shown). */
async function controlsIn(...args: Parameters<typeof machineControls>) {
  const { controls, canUpdate, canRollback } = await machineControls(...args);
  return { controls, canUpdate, canRollback };
}

const alpha = withStatus(memoryInstance('alpha', { apiToken: 't' }), await controlsIn((h) => h.run()));
const beta = withStatus(memoryInstance('beta', { apiToken: 't', state: 'stopped.idle' }), {
  pid: null,
  startedAt: null,
  ...(await controlsIn(() => {}, { canUpdate: false, canRollback: false })),
});
const gamma = withStatus(memoryInstance('gamma', { apiToken: 't', state: 'stopped.idle' }), {
  pid: null,
  startedAt: null,
  ...(await controlsIn(() => {})),
});

const test = appSuite('e2e :: dashboard first paint and buttons in Chromium', {
  viewport: { width: 1280, height: 800 },
  deps: () => ({ registry: memoryRegistry(alpha, beta, gamma) }),
});

const card = (key: string) => `article.card[data-key="${key}"]`;
const button = (key: string, action: string) => `${card(key)} button[data-action="${action}"]`;

interface ButtonView {
  enabled: boolean;
  label: string | null;
  why: string;
}

/** Per action of one card: enabled, its label and the reason shown when it is not (read in the page). */
function buttons(b: Browser, key: string): Promise<Record<string, ButtonView>> {
  return b.page.evaluate<
    Record<string, ButtonView>
  >(`Object.fromEntries([...document.querySelectorAll(${JSON.stringify(`${card(key)} button[data-action]`)})]
    .map((e) => [e.dataset.action, { enabled: !e.disabled, label: e.textContent, why: e.title }]))`);
}

function assertStoppedButtons(got: Record<string, ButtonView>) {
  assert.equal(got.restart, { enabled: true, label: 'Start', why: '' });
  // The machine takes a Stop of a stopped instance (it keeps it stopped across daemon restarts).
  assert.equal(got.stop, { enabled: true, label: 'Stop', why: '' });
  assert.is(got.rollback?.enabled, false, 'no Rollback without a previous build');
  assert.match(got.rollback?.why ?? '', 'bin.prev');
  assert.is(got.update?.enabled, false, 'no Update without a provider');
  assert.match(got.update?.why ?? '', 'UpdateType');
}

test(
  'first-paint :: without running any script, the first response shows every instance, its state and the right buttons',
  onPage(async ({ b, url }) => {
    await withoutScripts(b, async () => {
      await b.page.goto(url, { waitUntil: 'load' });
      await screenshot(b.page, 'dashboard-first-paint.png');
      for (const key of ['alpha', 'beta', 'gamma']) {
        const box = await b.page.locator(`${card(key)} h2.key`).boundingBox();
        assert.ok(
          box && box.width > 0 && box.y + box.height <= 800,
          `${key}'s name is on screen: ${JSON.stringify(box)}`,
        );
        assert.is(await b.page.textContent(`${card(key)} h2.key`), key);
      }
      assert.is(await b.page.textContent(`${card('beta')} .state-pill`), 'stopped.idle');
      assert.is(await b.page.textContent(`${card('alpha')} [data-field="pid"]`), '4242');
      assert.is(await b.page.textContent('#version'), 'v9.9.9');
      assert.not.match((await b.page.textContent('#conn')) ?? '', 'connecting');
      assertStoppedButtons(await buttons(b, 'beta'));
      assert.is((await buttons(b, 'alpha')).stop?.enabled, true);
    });
  }),
);

// The Chromium npm brings is a headless shell with neither flag: this test needs a system Chromium.
const PLAIN =
  'first-paint :: a plain `chromium --headless --screenshot` of the page (no waiting for scripts) shows the instances';
if (!SYSTEM_CHROMIUM) console.log(`skipped "${PLAIN}": it needs a system Chromium (CHROMIUM_PATH or apt's chromium)`);
(SYSTEM_CHROMIUM ? test : test.skip)(PLAIN, async ({ server }) => {
  // What an operator would run. A PNG cannot be read here, so a second plain run dumps the DOM it painted. The two
  // run at once, each in its own profile (one profile takes one Chromium): each is a whole browser start.
  const profiles = [await tempDir('wd-chromium-shot-'), await tempDir('wd-chromium-dom-')];
  const out = join(ARTIFACTS, 'dashboard-plain-screenshot.png');
  const plain = (profile: string) => [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    `--user-data-dir=${profile}`,
    '--window-size=1280,800',
  ];
  try {
    await mkdir(ARTIFACTS, { recursive: true });
    const [, { stdout: dom }] = await Promise.all([
      promisify(execFile)(SYSTEM_CHROMIUM!, [...plain(profiles[0]!.path), `--screenshot=${out}`, `${server!.url}/`], {
        timeout: 60_000,
      }),
      promisify(execFile)(SYSTEM_CHROMIUM!, [...plain(profiles[1]!.path), '--dump-dom', `${server!.url}/`], {
        timeout: 60_000,
        maxBuffer: 8 << 20,
      }),
    ]);
    const png = await readFile(out);
    assert.equal([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG');
    for (const key of ['alpha', 'beta', 'gamma'])
      assert.match(dom, `data-key="${key}"`, `the card of ${key} is painted`);
    assert.not.match(dom, /connecting…/, 'not a page still waiting for its data');
  } finally {
    for (const profile of profiles) await profile.cleanup();
  }
});

test(
  'first-paint :: with scripts, the buttons follow the status: without bin.prev a stopped instance cannot be rolled back',
  onPage(async ({ b, url }) => {
    await untilLive(b, url);
    assertStoppedButtons(await buttons(b, 'beta'));
    assert.equal(await buttons(b, 'gamma'), {
      restart: { enabled: true, label: 'Start', why: '' },
      update: { enabled: true, label: 'Update', why: '' },
      rollback: { enabled: true, label: 'Rollback', why: '' },
      stop: { enabled: true, label: 'Stop', why: '' },
      // A memory instance reports no maintenance: nothing to hold.
      hold: { enabled: false, label: 'Hold', why: 'this watchdog does not report maintenance' },
    });
    assert.equal(
      Object.values(await buttons(b, 'alpha')).map((x) => [x.label, x.enabled]),
      [
        ['Restart', true],
        ['Update', true],
        ['Rollback', true],
        ['Hold', false],
        ['Stop', true],
      ],
    );
    // Clicking the disabled Rollback does nothing.
    await b.page.click(button('beta', 'rollback'), { force: true });
    assert.is(await b.page.locator('dialog#confirm').isVisible(), false);
    assert.equal(beta.calls, []);
    beta.state = 'server.running';
    await b.page.reload(); // nothing announces a memory instance's change on the bus: load the page again

    await waitFor(
      'beta running',
      async () => (await b.page.textContent(`${card('beta')} .state-pill`)) === 'server.running' || undefined,
      10_000,
    );
    const running = await buttons(b, 'beta');
    assert.equal([running.stop?.enabled, running.restart?.label, running.rollback?.enabled], [true, 'Restart', false]);
    assert.equal(b.errors, []);
  }),
);

test('first-paint :: the Stop dialog says what stop does: leave at round end, then a graceful shutdown', async ({
  browser,
}) => {
  const b = browser!;
  await b.page.click(button('alpha', 'stop'));
  await b.page.locator('dialog#confirm').waitFor({ state: 'visible' });
  const text = (await b.page.textContent('#confirm-text')) ?? '';
  assert.match(text, 'end of the current round');
  assert.match(text, 'gracefully');
  await screenshot(b.page, 'dashboard-stop-dialog.png');
  await b.page.click('#confirm-cancel');
  assert.equal(alpha.calls, []);
});

test(
  'first-paint :: the state pill never wraps and the log takes the card width, even in a narrow window',
  onPage(async ({ b, url }) => {
    await b.page.setViewportSize({ width: 420, height: 800 });
    alpha.state = 'server.awaiting-checkin'; // the longest state, with a hyphen a browser may break at
    try {
      await b.page.goto(url);
      await b.page.waitForSelector(`${card('alpha')} .state-pill`);
      for (const key of ['alpha', 'beta', 'gamma']) {
        // One client rect per line box the text takes.
        const lines = await b.page.evaluate<number>(`(() => {
        const range = document.createRange();
        range.selectNodeContents(document.querySelector(${JSON.stringify(`${card(key)} .state-pill`)}));
        return range.getClientRects().length;
      })()`);
        assert.is(lines, 1, `${key}'s pill is on one line`);
        assert.is(
          await b.page.evaluate(
            `getComputedStyle(document.querySelector(${JSON.stringify(`${card(key)} .state-pill`)})).whiteSpace`,
          ),
          'nowrap',
        );
      }
      const log = await b.page.evaluate(`(() => {
      const s = getComputedStyle(document.querySelector(${JSON.stringify(`${card('alpha')} .log-lines`)}));
      return { whiteSpace: s.whiteSpace, wordBreak: s.wordBreak, overflowX: s.overflowX };
    })()`);
      // A long line wraps (layout.test.ts shows one): nothing cut, and a word broken only when it alone is too wide.
      assert.equal(log, { whiteSpace: 'pre-wrap', wordBreak: 'normal', overflowX: 'auto' });
      await b.page.click(`${card('alpha')} details.log summary`);
      const [pre, inner] = await b.page.evaluate<[number, number]>(`(() => {
      const card = document.querySelector(${JSON.stringify(card('alpha'))});
      const s = getComputedStyle(card);
      const inner = card.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
      return [card.querySelector('.log-lines').getBoundingClientRect().width, inner];
    })()`);
      assert.ok(Math.abs(pre - inner) < 2, `the log takes the card's width (${pre} of ${inner} px)`);
      await screenshot(b.page, 'dashboard-narrow.png');
    } finally {
      alpha.state = 'server.running';
      await b.page.setViewportSize({ width: 1280, height: 800 });
    }
  }),
);

test.run();
