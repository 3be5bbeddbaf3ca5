/** The page as the daemon renders it for a logged-in user: each card's buttons and panels by their rights. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { CardStatus } from '../../src/http/dashboard/assets/card-view.js';
import { renderPage } from '../../src/http/dashboard/page.ts';
import { ASSETS_DIR } from '../../src/http/dashboard/routes.ts';

const test = suite('dashboard :: the page by the user’s rights');

const status = (key: string): CardStatus => ({
  key,
  name: key,
  state: 'server.running',
  pid: 7,
  revision: 'r1',
  lastCheckinAt: null,
  startedAt: null,
  startupFailures: 0,
  restarts: 0,
  stopRequested: false,
  maintenance: { policy: 'Now', hold: null, pending: null, nextRestart: null, nextUpdateCheck: null, staged: null },
});

const MODERATOR = ['status.read', 'logs.read', 'control.restart', 'hold', 'console.send'];

async function page(permissions: Record<string, string[]>, session = true): Promise<string> {
  const index = await readFile(join(ASSETS_DIR, 'index.html'), 'utf8');
  return renderPage(
    index,
    {
      version: '1',
      now: 0,
      instances: [status('a')],
      recent: [],
      me: { user: 'mo', kind: 'user', accounts: true, session, permissions },
    },
    { svg: '<svg viewBox="0 0 10 10"></svg>' },
  );
}
const card = (html: string) => /<article class="card"[\s\S]*?<\/article>/.exec(html)?.[0] ?? '';
const button = (html: string, action: string) =>
  new RegExp(`<button[^>]*data-action="${action}"[^>]*>`).exec(card(html))?.[0] ?? '';

test('rights :: a button the user may not press is disabled, saying which right on which instance', async () => {
  const html = await page({ a: MODERATOR });
  assert.match(button(html, 'stop'), / disabled title="needs control.stop on a"/);
  assert.match(button(html, 'update'), /title="needs control.update on a"/);
  assert.not.match(button(html, 'restart'), /disabled/);
  assert.not.match(button(html, 'hold'), /disabled/);
});

test('rights :: panels the user may not use are hidden; the log is not', async () => {
  const html = card(await page({ a: MODERATOR }));
  assert.match(html, /<details class="files" hidden>/);
  assert.match(html, /<details class="backups" hidden>/);
  assert.match(html, /<details class="log">/);
  const all = card(await page({ a: [...MODERATOR, 'files.read', 'backups.read', 'backups.create'] }));
  assert.match(all, /<details class="files">/);
  assert.match(all, /<details class="backups">/);
});

test('rights :: the header names the logged-in user and offers Log out', async () => {
  const html = await page({ a: MODERATOR });
  assert.match(html, /<span id="who" class="who">mo<\/span>/);
  assert.match(html, /<button type="button" id="logout">/);
  const key = await page({ a: MODERATOR }, false);
  assert.match(key, /<span id="who" class="who" hidden><\/span>/, 'a key or Basic login has no session to end');
});

test.run();
