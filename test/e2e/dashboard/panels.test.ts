/**
 * The card's panels in Chromium against the real daemon and a demo server. Backups: the last-backup line, Back up
 * now, the list, and Restore through the confirmation dialog, which restarts the server on the data put back.
 * Files: the shared folders, a folder opened, and a file's download link that serves the file.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { type DaemonCtx, daemonSuite, waitState } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { type Browser, browserSuite, openBrowser, untilLive } from './_support/browser.ts';

const TOKEN = 'tok';
const card = 'article.card[data-key="alpha"]';

const test = browserSuite('e2e :: dashboard panels in Chromium', (name) =>
  daemonSuite<{ browser?: Browser }>(name, {
    config: async () => testConfig({ instances: [{ key: 'alpha', port: await freePort() }] }),
    before: async (ctx) => {
      ctx.browser = await openBrowser();
    },
    stopping: (ctx) => ctx.browser?.close(),
  }),
);

test('backups :: Back up now lists the snapshot; Restore puts its data back and restarts', async (ctx: DaemonCtx & {
  browser?: Browser;
}) => {
  const d = ctx.daemon!;
  const b = ctx.browser!;
  const running = await waitState(d, 'alpha', TOKEN, 'server.running');
  const marker = join(ctx.dir, 'instances', 'alpha', 'data', 'marker.txt');
  await writeFile(marker, 'before\n');
  await untilLive(b, d.url);
  assert.is(await b.page.textContent(`${card} [data-field="backup"]`), '—', 'no backup yet');

  await b.page.click(`${card} details.backups summary`);
  await waitFor(
    'the empty list',
    async () => /no backups yet/.test((await b.page.textContent(`${card} .backup-result`)) ?? ''),
    5_000,
  );
  await b.page.click(`${card} .backup-now`);
  await waitFor('one snapshot listed', async () => (await b.page.$$(`${card} .backup-list li`)).length === 1, 10_000);
  assert.match((await b.page.textContent(`${card} .backup-result`)) ?? '', /^taken: /);
  assert.match((await b.page.textContent(`${card} .backup-list li`)) ?? '', /manual/);
  await waitFor(
    'the card to show the snapshot',
    async () => /^manual .*ago$/.test((await b.page.textContent(`${card} [data-field="backup"]`)) ?? ''),
    10_000,
  );

  await writeFile(marker, 'after\n');
  await b.page.click(`${card} .backup-list li button[data-backup-action="restore"]`);
  await b.page.locator('dialog#confirm').waitFor({ state: 'visible' });
  assert.match((await b.page.textContent('#confirm-text')) ?? '', /current data is kept as a new backup/);
  await b.page.click('#confirm-ok');
  await waitState(d, 'alpha', TOKEN, 'server.running', { notPid: running.pid });
  const status = await d.status('alpha', TOKEN);
  assert.is(status.restore?.ok, true, JSON.stringify(status.restore));
  assert.is(await readFile(marker, 'utf8'), 'before\n', 'the data of the snapshot is back');
  await waitFor(
    'the before-restore snapshot listed',
    async () => (await b.page.$$(`${card} .backup-list li`)).length === 2,
    10_000,
  );
  assert.match((await b.page.textContent(`${card} .backup-list li`)) ?? '', /before-restore/);
  assert.equal(b.errors, [], 'no console or page errors');
});

test('files :: the Files panel lists the shared folders, opens logs and links a file that downloads', async (ctx: DaemonCtx & {
  browser?: Browser;
}) => {
  const d = ctx.daemon!;
  const b = ctx.browser!;
  await untilLive(b, d.url);
  await b.page.click(`${card} details.files summary`);
  const names = () => b.page.$$eval(`${card} .files-rows tr td:first-child`, (tds) => tds.map((t) => t.textContent));
  await waitFor('the shared folders', async () => ((await names()).includes('logs/') ? true : undefined), 10_000);
  await b.page.click(`${card} .files-rows button:text-is("logs/")`);
  await waitFor('server.log listed', async () => ((await names()).includes('server.log') ? true : undefined), 10_000);
  assert.is(await b.page.textContent(`${card} .files-path`), 'logs');
  const href = await b.page.getAttribute(`${card} .files-rows a:text-is("server.log")`, 'href');
  const res = await fetch(new URL(href ?? '', d.url));
  assert.is(res.status, 200);
  assert.match(await res.text(), /./, 'the server log has lines');
  await b.page.click(`${card} .files-up`);
  await waitFor(
    'back at the shared folders',
    async () => ((await names()).includes('logs/') ? true : undefined),
    10_000,
  );
  assert.equal(b.errors, [], 'no console or page errors');
});

test.run();
