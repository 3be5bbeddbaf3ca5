import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
/** The dashboard page, its assets and the statechart SVG (src/http/dashboard/routes.ts, src/chart/render.ts). */
import * as assert from 'uvu/assert';
import { createBus } from '../../src/bus.ts';
import { statePaths } from '../../src/chart/graph.ts';
import { NODE_ID_PREFIX } from '../../src/chart/render.ts';
import { createApp } from '../../src/http/app.ts';
import { ASSETS_DIR } from '../../src/http/dashboard/routes.ts';
import { fromLoopback, memoryInstance, memoryRegistry, recordingLogger } from './_support/app.ts';

const app = fromLoopback(
  createApp({
    registry: memoryRegistry(memoryInstance('alpha', { apiToken: 't' })),
    bus: createBus(),
    log: recordingLogger(),
    version: '1',
  }),
);

const page = suite('dashboard :: page and assets');

page('dashboard :: GET / → the page, with a strict Content-Security-Policy', async () => {
  const res = await app.request('/');
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', 'text/html');
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, "default-src 'self'");
  assert.match(csp, "script-src 'self'");
  assert.not.match(csp, 'unsafe-inline');
  assert.match(csp, "frame-ancestors 'none'");
  assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  const html = await res.text();
  assert.match(html, '<script type="module" src="/dashboard/app.js"></script>');
  assert.not.match(html, /<script>|\son[a-z]+=/i, 'no inline script or handler (the CSP would block it)');
});

page('dashboard :: every asset the page names, and every module those import, is served with its type', async () => {
  const html = await (await app.request('/')).text();
  const refs = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1] ?? '');
  assert.ok(refs.includes('/dashboard/app.js') && refs.includes('/dashboard/style.css'), refs.join());
  const types: Record<string, string> = { js: 'javascript', css: 'text/css' };
  const served = new Set<string>();
  while (refs.length > 0) {
    const ref = refs.shift() ?? '';
    if (served.has(ref)) continue;
    served.add(ref);
    const res = await app.request(ref);
    assert.is(res.status, 200, ref);
    assert.match(res.headers.get('content-type') ?? '', types[ref.split('.').pop() ?? ''] ?? '', ref);
    const body = await res.text();
    if (ref.endsWith('.js'))
      for (const m of body.matchAll(/from '\.\/([a-z-]+\.js)'/g)) refs.push(`/dashboard/${m[1]}`);
  }
  const modules = (await readdir(ASSETS_DIR)).filter((f) => f.endsWith('.js')).map((f) => `/dashboard/${f}`);
  assert.equal(
    [...served].filter((r) => r.endsWith('.js')).sort(),
    modules.sort(),
    'every module is reachable from app.js',
  );
});

page('dashboard :: no asset loads anything from another origin (no CDN)', async () => {
  const files = await readdir(ASSETS_DIR);
  assert.ok(files.length >= 3);
  for (const f of files) {
    const text = await readFile(join(ASSETS_DIR, f), 'utf8');
    // The SVG namespace is a name, not a fetch.
    const external = [...text.matchAll(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s"'`)]*/gi)]
      .map((m) => m[0])
      .filter((u) => u !== 'http://www.w3.org/2000/svg');
    assert.equal(external, [], f);
    assert.not.match(text, /@import|url\(\s*["']?(?:https?:)?\/\//i, f);
  }
});

page('dashboard :: paths outside the assets folder, unknown files and other methods are refused', async () => {
  for (const path of [
    '/dashboard/../package.json',
    '/dashboard/%2e%2e/package.json',
    '/dashboard/..%2fpackage.json',
    '/dashboard/nope.js',
    '/dashboard/',
    '/dashboard/app.ts',
  ]) {
    const res = await app.request(path);
    assert.is(res.status, 404, path);
  }
  assert.is((await app.request('/', { method: 'POST' })).status, 405);
});

page.run();

// ---

const chart = suite('dashboard :: statechart SVG');

chart(
  'dashboard :: GET /statechart.svg: an inlineable SVG with a node id for every state a status can show',
  async () => {
    const res = await app.request('/statechart.svg');
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', 'image/svg+xml');
    const svg = await res.text();
    assert.ok(svg.startsWith('<svg'), 'no XML prolog, so it can be inlined');
    assert.match(svg, /viewBox="[\d. ]+"/);
    assert.not.match(svg.slice(0, svg.indexOf('>')), /\swidth="/, 'no fixed size: CSS scales it');
    const ids = new Set([...svg.matchAll(/\sid="([^"]+)"/g)].map((m) => (m[1] ?? '').replace(/&#45;/g, '-')));
    for (const path of statePaths()) assert.ok(ids.has(`${NODE_ID_PREFIX}${path}`), `node for ${path}`);
  },
);

chart(
  'dashboard :: GET /statechart.svg?view=operator: plain names, a node for every status state; a bad view is 400',
  async () => {
    const res = await app.request('/statechart.svg?view=operator');
    assert.is(res.status, 200);
    const svg = await res.text();
    assert.ok(svg.startsWith('<svg'));
    const ids = new Set([...svg.matchAll(/\sid="([^"]+)"/g)].map((m) => (m[1] ?? '').replace(/&#45;/g, '-')));
    for (const path of statePaths()) assert.ok(ids.has(`${NODE_ID_PREFIX}${path}`), `node for ${path}`);
    assert.match(svg, '>backing off after crashes</text>');
    assert.not.match(svg, 'updateCheck');
    const developer = await (await app.request('/statechart.svg?view=developer')).text();
    assert.is(developer, await (await app.request('/statechart.svg')).text(), 'developer is the default');
    assert.match(developer, 'updateCheck');
    const bad = await app.request('/statechart.svg?view=manager');
    assert.is(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, 'view must be one of operator, developer');
  },
);

chart.run();
