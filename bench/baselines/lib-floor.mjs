#!/usr/bin/env node
/**
 * The floor for the footprint benchmark: a bare Node process that loads what the daemon loads (tsx's register hook,
 * hono, @hono/node-server, xstate, yaml, valibot, mitt, ofetch), uses each a little so it is really loaded, and
 * answers GET /health on 127.0.0.1:$BENCH_PORT, then idles. Nothing of the daemon's own code.
 */
import { register } from 'tsx/esm/api';

register();
const [{ Hono }, { serve }, { createMachine, createActor }, YAML, v, { default: mitt }, { ofetch }] = await Promise.all(
  [
    import('hono'),
    import('@hono/node-server'),
    import('xstate'),
    import('yaml'),
    import('valibot'),
    import('mitt'),
    import('ofetch'),
  ],
);

const settings = v.parse(v.object({ port: v.number() }), YAML.parse(`port: ${Number(process.env.BENCH_PORT ?? 0)}`));
const actor = createActor(createMachine({ initial: 'idle', states: { idle: {} } })).start();
const bus = mitt();
bus.on('x', () => {});
void ofetch;
const app = new Hono();
app.get('/health', (c) => c.json({ status: 'ok', state: actor.getSnapshot().value }));
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: settings.port });
process.on('SIGTERM', () => process.exit(0));
