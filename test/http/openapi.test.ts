import { Validator } from '@seriousme/openapi-schema-validator';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { harness, memoryInstance, memoryRegistry, send } from './_support/app.ts';

const openapi = suite('openapi');

interface Doc {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
}

/** Hono's path as OpenAPI writes it: `:param` (with or without a `{regex}`) → `{param}`, the wildcard → `{path}`. */
const openApiPath = (path: string): string =>
  path.replace(/:(\w+)(\{(?:[^{}]|\{[^{}]*\})*\})?/g, '{$1}').replace(/\/\*$/, '/{path}');

async function document(): Promise<{ doc: Doc; text: string; routes: { method: string; path: string }[] }> {
  const { app } = harness(memoryRegistry(memoryInstance('alpha', { apiToken: 't' })));
  const res = await send(app, 'GET', '/openapi.json');
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', 'application/json');
  const text = await res.text();
  // `ALL /*` entries are the app-wide middleware (client address, cross-site guard), not routes.
  const routes = app.routes.filter((r) => !(r.method === 'ALL' && r.path === '/*'));
  return { doc: JSON.parse(text) as Doc, text, routes };
}

openapi('openapi :: GET /openapi.json lists every method and path the app serves', async () => {
  const { doc, routes } = await document();
  const missing: string[] = [];
  for (const { method, path } of routes) {
    const item = doc.paths[openApiPath(path)];
    // `ALL` routes answer 405 to the other methods of a listed path; every other route is an operation.
    if (method === 'ALL' ? item === undefined : item?.[method.toLowerCase()] === undefined)
      missing.push(`${method} ${path}`);
  }
  assert.equal(missing, [], `routes the app serves but the document does not list: ${missing.join(', ')}`);
  // And nothing listed that the app does not serve: a documented method has its own route, or the path is served
  // by one handler for every method (the check-in route, which answers 405 itself).
  const served = new Set(
    routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`),
  );
  const allOnly = new Set(
    routes
      .filter((r) => r.method === 'ALL')
      .map((r) => openApiPath(r.path))
      .filter((path) => !routes.some((r) => r.method !== 'ALL' && openApiPath(r.path) === path)),
  );
  const extra = Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).map((m) => [m, path] as const))
    .filter(([m, path]) => !served.has(`${m} ${path}`) && !allOnly.has(path))
    .map(([m, path]) => `${m} ${path}`);
  assert.equal(extra, [], 'documented operations the app does not serve');
  assert.ok(doc.paths['/openapi.json']?.get, 'the document lists itself');
});

openapi('openapi :: the document validates as OpenAPI 3.1', async () => {
  const { text } = await document();
  const validator = new Validator();
  const result = await validator.validate(JSON.parse(text) as Record<string, unknown>);
  assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
  assert.is(validator.version, '3.1');
});

openapi('openapi :: security and answers as README states them; the status schema has every field', async () => {
  const { doc } = await document();
  assert.equal(doc.paths['/health']?.get?.security, []);
  assert.equal(doc.paths['/openapi.json']?.get?.security, []);
  assert.equal(doc.paths['/instances/{key}/status']?.get?.security, [{ instanceToken: [] }]);
  assert.equal(doc.paths['/server_api/{key}/ping']?.post?.security, [{ launchSecret: [] }]);
  assert.equal(doc.paths['/api/instances']?.get?.security, [{ admin: [] }, {}]);
  assert.equal(Object.keys(doc.paths['/instances/{key}/update']?.post?.responses ?? {}), [
    '200',
    '400',
    '401',
    '403',
    '404',
    '405',
    '409',
    '503',
  ]);
  const { app } = harness(memoryRegistry(memoryInstance('alpha', { apiToken: 't' })));
  const status = (await (
    await send(app, 'GET', '/instances/alpha/status', `Basic ${Buffer.from('alpha:t').toString('base64')}`)
  ).json()) as Record<string, unknown>;
  const properties = Object.keys(doc.components.schemas.InstanceStatus?.properties ?? {});
  for (const field of Object.keys(status))
    assert.ok(properties.includes(field), `status field ${field} is in the schema`);
  for (const field of ['lastExit', 'canUpdate', 'canRollback', 'checking'])
    assert.ok(properties.includes(field), field);
});

openapi('openapi :: GET /openapi.json needs no auth; other methods → 405', async () => {
  const { app } = harness(memoryRegistry());
  assert.is((await send(app, 'GET', '/openapi.json')).status, 200);
  const res = await send(app, 'POST', '/openapi.json');
  assert.is(res.status, 405);
  assert.is(res.headers.get('allow'), 'GET, HEAD');
});

openapi.run();
