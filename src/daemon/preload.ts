/**
 * The modules the daemon loads on first use (the HTTP app, metrics, update providers, tar, the OpenAPI converter),
 * loaded at start instead, before any instance starts.
 *
 * Node keeps a failed import for good: an `import()` that met EMFILE while reading a module's file fails the same
 * way at every later call, even once descriptors are back (verified on Node 20). Loaded first while a flood or a
 * leak holds every descriptor, a module would break its feature until the daemon restarts: every API request 500,
 * or an instance that can never launch again. At start descriptors are plentiful; later imports of these modules
 * are then answered from the module cache and open no file.
 *
 * `test/daemon/preload.test.ts` checks that every `import()` in src/ is listed here, or named there with the reason
 * it is not: loaded only while the daemon starts, or too large for what it serves (the dashboard's chart drawing).
 */
const LOADERS = [
  () => import('../http/app.ts'),
  () => import('@hono/node-server'),
  () => import('@valibot/to-json-schema'),
  () => import('prom-client'),
  () => import('../metrics/families.ts'),
  () => import('../chart/graph.ts'),
  () => import('../metrics/disk-gauges.ts'),
  () => import('../metrics/connection-metrics.ts'),
  () => import('../updates/providers/manifest.ts'),
  () => import('../updates/providers/ci-server.ts'),
  () => import('../updates/providers/git.ts'),
  () => import('../updates/providers/local.ts'),
  () => import('../updates/archive/extract.ts'),
  () => import('tar'),
];

/** Loads every module above; rejects with the first failure (the daemon cannot be trusted to run without them). */
export async function preloadModules(): Promise<void> {
  await Promise.all(LOADERS.map((load) => load()));
}
