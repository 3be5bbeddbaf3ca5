/**
 * A uvu suite for the dashboard page in headless Chromium against the real HTTP app (not the daemon) on a loopback
 * socket, with an in-memory registry, so a test decides exactly what the page is shown (not a suite itself).
 */
import { suite, type Test } from 'uvu';
import { createBus } from '../../../../src/bus.ts';
import { createApp } from '../../../../src/http/app.ts';
import type { HttpDeps } from '../../../../src/http/deps.ts';
import { type HttpServer, startHttpServer } from '../../../../src/http/server.ts';
import { reported } from '../../../_support/daemon.ts';
import { recordingLogger } from '../../../http/_support/app.ts';
import { type Browser, browserSuite, openBrowser } from './browser.ts';

export interface AppCtx {
  server?: HttpServer;
  browser?: Browser;
}

/** `deps` gives the registry and whatever else the app should differ in (bus, log and version are filled in). */
export function appSuite<C extends object = Record<never, never>>(
  name: string,
  opts: {
    ctx?: C;
    viewport: { width: number; height: number };
    deps: (ctx: C & AppCtx) => Pick<HttpDeps, 'registry'> & Partial<HttpDeps>;
    before?: (ctx: C & AppCtx) => unknown;
  },
): Test<C & AppCtx> {
  const s = browserSuite(name, (n) => suite<C & AppCtx>(n, opts.ctx as C & AppCtx));
  s.before(
    reported(async (ctx: C & AppCtx) => {
      const app = createApp({ bus: createBus(), log: recordingLogger(), version: '9.9.9', ...opts.deps(ctx) });
      ctx.server = await startHttpServer(app, { port: 0 });
      ctx.browser = await openBrowser(opts.viewport);
      await opts.before?.(ctx);
    }),
  );
  s.after(async (ctx) => {
    await ctx.browser?.close();
    await ctx.server?.close();
  });
  return s;
}

/** A test body given the browser and the page's address (`<server>/`), both set up by the suite's `before`. */
export const onPage =
  <C extends AppCtx>(fn: (page: { b: Browser; url: string }, ctx: C) => Promise<void>) =>
  (ctx: C) =>
    fn({ b: ctx.browser!, url: `${ctx.server!.url}/` }, ctx);
