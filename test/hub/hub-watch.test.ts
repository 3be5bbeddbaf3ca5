/**
 * The hub watch against a strict fake SS14.ServerHub on loopback and a real HTTP server standing for the game
 * server's status API: the advertisement the engine sends, the listing the daemon checks, a server dropped from
 * the list, the re-advertise that brings it back or the notice told once when it does not.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkListing, createHubWatch } from '../../src/hub/hub-watch.ts';
import { type FakeHub, startFakeHub } from '../_support/fake-hub.ts';

interface Ctx {
  hub: FakeHub;
  game: Server;
  address: string;
  told: string[];
}
const test = suite<Ctx>('hub watch', {} as Ctx);

test.before.each(async (ctx) => {
  ctx.hub = await startFakeHub();
  ctx.told = [];
  ctx.game = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify(req.url?.startsWith('/status') ? { name: 'Test Station', players: 3, tags: [] } : { desc: 'x' }),
    );
  });
  await new Promise<void>((resolve) => ctx.game.listen(0, '127.0.0.1', resolve));
  ctx.address = `ss14://127.0.0.1:${(ctx.game.address() as AddressInfo).port}`;
});
test.after.each(async (ctx) => {
  await ctx.hub.close();
  await new Promise((resolve) => ctx.game.close(resolve));
});

/** What the engine's HubManager sends at each advertise interval. */
const advertise = (hub: FakeHub, address: string) =>
  fetch(`${hub.url}api/servers/advertise`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ Address: address }),
  });

function watchOf(ctx: Ctx, clock: { t: number }, readvertise?: () => Promise<void>) {
  return createHubWatch({
    settings: { serverUrl: ctx.address, hubUrls: [ctx.hub.url], intervalSeconds: 120, problems: [] },
    missingAfterMs: 60_000,
    now: () => clock.t,
    check: (hub, address) => checkListing(hub, address, { timeoutMs: 5_000, maxBytes: 64_000 }),
    readvertise,
    reports: {
      missing: (hub, address, since, why) => ctx.told.push(`missing ${hub} ${address} since ${since} (${why})`),
      back: (hub, _address, ms) => ctx.told.push(`back ${hub} after ${ms}`),
      readvertised: (hub) => ctx.told.push(`readvertised ${hub}`),
    },
  });
}

test('fake hub :: refuses what the real hub refuses, lists what it accepts', async (ctx) => {
  assert.is((await advertise(ctx.hub, 'http://127.0.0.1:1')).status, 400);
  const unreachable = await advertise(ctx.hub, 'ss14://127.0.0.1:1');
  assert.is(unreachable.status, 422);
  assert.match(await unreachable.text(), /Unable to contact status address/);
  assert.is((await advertise(ctx.hub, ctx.address)).status, 204);
  const list = (await (await fetch(`${ctx.hub.url}api/servers`)).json()) as Array<{
    address: string;
    statusData: { name: string };
  }>;
  assert.equal(
    list.map((s) => [s.address, s.statusData.name]),
    [[ctx.address, 'Test Station']],
  );
});

test('hub watch :: listed, then dropped: re-advertise first, then told once, then back', async (ctx) => {
  const clock = { t: 1_000_000 };
  let sent = 0;
  const watch = watchOf(ctx, clock, async () => {
    sent++;
  });
  await advertise(ctx.hub, ctx.address);
  await watch.poll();
  assert.is(watch.states()[0]?.listing, 'listed');

  ctx.hub.drop(ctx.address);
  await watch.poll();
  assert.is(watch.states()[0]?.missingSince, 1_000_000, 'the absence starts at the first poll that misses it');
  clock.t += 30_000;
  await watch.poll();
  assert.equal(ctx.told, [], 'not before missingAfterMs');
  clock.t += 30_000;
  await watch.poll();
  assert.equal([sent, ctx.told], [1, [`readvertised ${ctx.hub.url}`]], 'the re-advertise command comes first');
  clock.t += 30_000;
  await watch.poll();
  await watch.poll();
  assert.is(sent, 1, 'sent once per absence');
  assert.equal(ctx.told.slice(1), [`missing ${ctx.hub.url} ${ctx.address} since 1000000 (null)`], 'told once');

  await advertise(ctx.hub, ctx.address);
  clock.t += 10_000;
  await watch.poll();
  assert.equal(ctx.told.slice(2), [`back ${ctx.hub.url} after 100000`]);
  assert.equal(watch.states()[0], {
    hub: ctx.hub.url,
    listing: 'listed',
    missingSince: null,
    lastError: null,
    readvertised: false,
    told: false,
    checkedAt: 1100000,
  });
});

test('hub watch :: a re-advertise that works is never told', async (ctx) => {
  const clock = { t: 0 };
  const watch = watchOf(ctx, clock, async () => {
    await advertise(ctx.hub, ctx.address);
  });
  await watch.poll();
  clock.t += 60_000;
  await watch.poll();
  await watch.poll();
  assert.equal(ctx.told, [`readvertised ${ctx.hub.url}`]);
  assert.is(watch.states()[0]?.listing, 'listed');
});

test('hub watch :: without a console the absence is told at once; a hub that is down is no absence', async (ctx) => {
  const clock = { t: 0 };
  const watch = watchOf(ctx, clock);
  watch.line(
    `[ERRO] hub: Error status while advertising server: [UnprocessableEntity] Unable to contact status address, ensure your firewall, from ${ctx.hub.url}`,
  );
  await watch.poll();
  clock.t += 60_000;
  await watch.poll();
  assert.equal(ctx.told, [
    `missing ${ctx.hub.url} ${ctx.address} since 0 (the hub refused the advertisement: [UnprocessableEntity] Unable to contact status address, ensure your firewall)`,
  ]);
  await ctx.hub.close();
  await watch.poll();
  assert.is(watch.states()[0]?.listing, 'unknown');
  assert.match(
    watch.states()[0]?.lastError ?? '',
    /cannot reach the hub at http:\/\/127\.0\.0\.1:\d+\/api\/servers\/info\?url=ss14/,
  );
  ctx.hub = await startFakeHub();
});

test('hub watch :: without hub.server_url the address comes from the engine log', async (ctx) => {
  const watch = createHubWatch({
    settings: { serverUrl: '', hubUrls: [ctx.hub.url], intervalSeconds: 120, problems: [] },
    missingAfterMs: 0,
    now: () => 0,
    check: (hub, address) => checkListing(hub, address, { timeoutMs: 5_000, maxBytes: 64_000 }),
    reports: { missing: () => ctx.told.push('missing'), back: () => {}, readvertised: () => {} },
  });
  await watch.poll();
  assert.equal([ctx.hub.requests.length, ctx.told], [0, []], 'nothing to ask before the address is known');
  watch.line(`[INFO] hub: Guessed server address to be ${ctx.address}`);
  assert.is(watch.address(), ctx.address);
  await watch.poll();
  assert.equal(ctx.told, ['missing']);
});

test.run();
