/**
 * The dashboard's maintenance line and Hold/Release button in Chromium, against the HTTP app with a
 * memory instance whose hold the button sets and clears.
 */
import * as assert from 'uvu/assert';
import type { MaintenanceStatus } from '../../../src/supervisor/status.ts';
import { waitFor } from '../../_support/env.ts';
import { memoryInstance, memoryRegistry } from '../../http/_support/app.ts';
import { appSuite, onPage } from './_support/app-suite.ts';
import { untilLive } from './_support/browser.ts';

const alpha = memoryInstance('alpha', { apiToken: 't' });
let held: { reason: string; until: number } | null = null;
const status = alpha.status;
alpha.status = () => {
  const maintenance: MaintenanceStatus = {
    policy: 'Empty',
    pending: null,
    nextRestart: new Date(Date.now() + 3 * 3_600_000 + 30_000).toISOString(),
    nextUpdateCheck: null,
    staged: null,
    hold:
      held === null
        ? null
        : { reason: held.reason, since: new Date().toISOString(), until: new Date(held.until).toISOString() },
  };
  return { ...status(), maintenance };
};
alpha.hold = (minutes, reason) => {
  alpha.calls.push(`hold:${minutes}`);
  held = { reason, until: Date.now() + minutes * 60_000 };
  return null;
};
alpha.release = () => {
  alpha.calls.push('release');
  const was = held !== null;
  held = null;
  return was;
};

const test = appSuite('e2e :: dashboard maintenance in Chromium', {
  viewport: { width: 1280, height: 800 },
  deps: () => ({ registry: memoryRegistry(alpha) }),
});

const card = 'article.card[data-key="alpha"]';
const field = `${card} [data-field="maintenance"]`;
const holdButton = `${card} button[data-action="hold"]`;

test(
  'maintenance :: the card shows the next restart; Hold holds for an hour, then the button releases',
  onPage(async ({ b, url }) => {
    await untilLive(b, url);
    assert.match((await b.page.textContent(field)) ?? '', /^next restart in 3 h/);
    assert.is(await b.page.textContent(holdButton), 'Hold');

    await b.page.click(holdButton);
    await b.page.locator('dialog#confirm').waitFor({ state: 'visible' });
    assert.match((await b.page.textContent('#confirm-text')) ?? '', 'wait for an hour');
    await b.page.click('#confirm-ok');
    await waitFor('the hold', async () => (alpha.calls.includes('hold:60') ? true : undefined), 5_000);
    assert.match(held?.reason ?? '', 'held from the dashboard');

    await b.page.reload(); // a memory instance's change is not on the bus: load the page again
    await b.page.waitForSelector(holdButton);
    assert.match((await b.page.textContent(field)) ?? '', /^held for (59 min|1 h)/);
    assert.is(await b.page.textContent(holdButton), 'Release');
    await b.page.click(holdButton);
    await b.page.locator('dialog#confirm').waitFor({ state: 'visible' });
    await b.page.click('#confirm-ok');
    await waitFor('the release', async () => (alpha.calls.includes('release') ? true : undefined), 5_000);
    assert.is(held, null);
    assert.equal(b.errors, []);
  }),
);

test.run();
