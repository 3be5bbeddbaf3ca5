import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createGameApi } from '../../src/kit/api.ts';
import { AddressError, derivedConnectAddress, formatProbe, normaliseAddress, probe } from '../../src/kit/probe.ts';
import type { Info, Status } from '../../src/kit/schemas.ts';
import { freePort } from '../_support/env.ts';
import {
  type EngineServer,
  INFO_ACZ,
  INFO_EXTERNAL,
  INFO_NO_BUILD,
  STATUS_IN_ROUND,
  STATUS_LOBBY,
  startEngineServer,
} from '../fixtures/engine/payloads.ts';
import { assertThrowsWith } from './_support/throws.ts';

const addr = suite('probe :: address normalisation');

/**
 * Each line: an address as typed and the status URL it gives; the info URL is the same with `info` for `status`.
 * The first four are the launcher's own test cases (UriHelperTests.cs).
 */
const TABLE = `
  server.spacestation14.io                 http://server.spacestation14.io:1212/status
  ss14s://server.spacestation14.io         https://server.spacestation14.io/status
  ss14s://server.spacestation14.io:1212    https://server.spacestation14.io:1212/status
  ss14s://server.spacestation14.io/foo     https://server.spacestation14.io/foo/status
  127.0.0.1:4000                           http://127.0.0.1:4000/status
  ss14://h                                 http://h:1212/status
  ss14://h:80                              http://h/status
  ss14://h/a/b/                            http://h:1212/a/b/status
  ss14://h/x?q=1#f                         http://h:1212/x/status
  SS14://Host.Example                      http://host.example:1212/status
  [::1]:5000                               http://[::1]:5000/status
  [::1]                                    http://[::1]:1212/status
  http://h                                 http://h/status
  http://h:8080/api                        http://h:8080/api/status
  https://h                                https://h/status
`;
const ADDRESSES = TABLE.trim()
  .split('\n')
  .map((line) => line.trim().split(/\s+/) as [string, string]);
// Spaces around an address are trimmed; they cannot stand in the table.
ADDRESSES.push(['  127.0.0.1  ', 'http://127.0.0.1:1212/status']);
for (const [input, statusUrl] of ADDRESSES) {
  const infoUrl = statusUrl.replace(/status$/, 'info');
  addr(`probe :: ${JSON.stringify(input)} → ${statusUrl}`, () => {
    const a = normaliseAddress(input);
    assert.is(a.statusUrl.href, statusUrl);
    assert.is(a.infoUrl.href, infoUrl);
    assert.ok(a.api.pathname.endsWith('/'));
  });
}

const BAD: Array<[string, RegExp]> = [
  ['', /no server address/],
  ['   ', /no server address/],
  ['ftp://h', /ftp:\/\/ is not supported/],
  ['ss14://', /not a valid server address|no host/],
  ['h:0', /port 0/],
  ['h:99999', /not a valid server address/],
  ['a b', /spaces/],
];
for (const [input, message] of BAD) {
  addr(`probe :: ${JSON.stringify(input)} → AddressError`, () => {
    assertThrowsWith(() => normaliseAddress(input), AddressError, message);
  });
}

addr('probe :: derived connect address: host and port of the info URL', () => {
  assert.is(derivedConnectAddress(normaliseAddress('h').infoUrl), 'udp://h:1212/');
  assert.is(derivedConnectAddress(normaliseAddress('ss14s://h').infoUrl), 'udp://h:443/');
  assert.is(derivedConnectAddress(normaliseAddress('http://h').infoUrl), 'udp://h:80/');
  assert.is(derivedConnectAddress(normaliseAddress('[::1]:7').infoUrl), 'udp://[::1]:7/');
});
addr.run();

// ---
interface Ctx {
  server?: Server;
  port?: number;
  status?: Status | unknown;
  info?: Info | unknown;
}
const live = suite<Ctx>('probe :: against a loopback server', {});

const GOOD_INFO: Info = {
  auth: { mode: 'Optional', public_key: 'cHVibGlj' },
  build: null,
  desc: 'Testing',
  links: [{ name: 'Wiki', icon: 'wiki', url: 'https://wiki.example' }],
  privacy_policy: { link: 'https://example.com/p', identifier: 'ex', version: '2' },
};

live.before(async (ctx) => {
  const app = new Hono();
  app.route(
    '/',
    createGameApi({
      status: () => ctx.status as Status,
      info: () => ctx.info as Info,
      watchdogToken: () => undefined,
      onShutdown: () => {},
      onUpdate: () => {},
    }),
  );
  // Raw routes for payloads the kit would never produce. The /slow/ ones are the fixture's behaviour: a server that
  // answers 1.5 s late, for the probe's shorter timeout.
  app.get('/raw/status', (c) => c.json(ctx.status));
  app.get('/raw/info', (c) => c.json(ctx.info));
  app.get('/text/status', (c) => c.text('hello'));
  app.get('/text/info', (c) => c.text('hello', 500));
  app.get('/slow/status', async (c) => {
    await new Promise((r) => setTimeout(r, 1500));
    return c.json({});
  });
  app.get('/slow/info', async (c) => {
    await new Promise((r) => setTimeout(r, 1500));
    return c.json({});
  });
  await new Promise<void>((resolve) => {
    ctx.server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve()) as Server;
  });
  ctx.port = (ctx.server!.address() as AddressInfo).port;
});
live.after(
  (ctx) =>
    new Promise<void>((r) => {
      ctx.server?.closeAllConnections();
      ctx.server?.close(() => r());
    }),
);

live(
  'probe :: a valid server: tags explicit and inferred, regions, derived connect address, no problems',
  async (ctx) => {
    ctx.status = { name: '[EN][18+] Test', players: 3, soft_max_players: 20, tags: ['region:eu_w', 'rp:low'] };
    ctx.info = GOOD_INFO;
    const d = await probe(`127.0.0.1:${ctx.port}`);
    const r = d.result;
    assert.equal(r.problems, []);
    assert.is(r.statusUrl, `http://127.0.0.1:${ctx.port}/status`);
    assert.equal(r.tags, { explicit: ['region:eu_w', 'rp:low'], inferred: ['lang:en', '18+'] });
    assert.equal(r.regions, [{ tag: 'region:eu_w', code: 'eu_w', name: 'Western Europe' }]);
    assert.is(r.connectAddress, `udp://127.0.0.1:${ctx.port}/`);
    assert.is(Object.keys(r).join(' '), 'address statusUrl infoUrl status info tags regions connectAddress problems');
    const text = formatProbe(d);
    for (const part of [
      '[EN][18+] Test',
      '3 / 20',
      'lang:en, 18+',
      'eu_w (Western Europe)',
      'Optional',
      'Wiki [wiki] https://wiki.example',
      'identifier ex, version 2',
      '(derived',
      'no problems',
    ]) {
      assert.ok(text.includes(part), `missing ${part} in:\n${text}`);
    }
  },
);

live('probe :: an explicit connect address is reported as given', async (ctx) => {
  ctx.status = { name: 'x', players: 0 };
  ctx.info = { ...GOOD_INFO, connect_address: 'udp://play.example:1212/' };
  const r = (await probe(`127.0.0.1:${ctx.port}`)).result;
  assert.is(r.connectAddress, 'udp://play.example:1212/');
});

live('probe :: an invalid server: every problem with a status./info. path', async (ctx) => {
  ctx.status = { name: 'x', players: -1, tags: ['region:mars'] };
  // Icon names are case-sensitive in the launcher.
  ctx.info = { auth: { mode: 'Sometimes' }, build: null, links: [{ name: 'D', icon: 'Discord', url: 'ftp://x' }] };
  const d = await probe(`http://127.0.0.1:${ctx.port}/raw`);
  const paths = d.result.problems.map((p) => p.path).sort();
  assert.equal(paths, ['info.auth.mode', 'info.links.0.icon', 'info.links.0.url', 'status.players']);
  assert.match(formatProbe(d), /4 problems:/);
});

live('probe :: tag problems appear when the shape is right', async (ctx) => {
  ctx.status = { name: 'x', players: 1, tags: ['region:mars'] };
  ctx.info = GOOD_INFO;
  const r = (await probe(`http://127.0.0.1:${ctx.port}/raw`)).result;
  assert.equal(
    r.problems.map((p) => p.path),
    ['status.tags.0'],
  );
  assert.equal(r.regions, []);
});

live('probe :: non-JSON and HTTP errors are problems', async (ctx) => {
  const r = (await probe(`http://127.0.0.1:${ctx.port}/text`)).result;
  assert.is(r.problems.length, 2);
  assert.match(r.problems[0]?.message ?? '', /not JSON/);
  assert.match(r.problems[1]?.message ?? '', /answered 500/);
  assert.is(r.status, null);
  assert.is(r.connectAddress, null);
});

live('probe :: a server that does not answer in time is a problem, not a hang', async (ctx) => {
  const r = (await probe(`http://127.0.0.1:${ctx.port}/slow`, { timeoutMs: 200 })).result;
  assert.equal(
    r.problems.map((p) => p.path),
    ['status', 'info'],
  );
  assert.match(r.problems[0]?.message ?? '', /no answer within 0.2 s/);
});

live('probe :: an unreachable server is a problem', async () => {
  const port = await freePort();
  const r = (await probe(`127.0.0.1:${port}`)).result;
  assert.equal(
    r.problems.map((p) => p.path),
    ['status', 'info'],
  );
  assert.match(r.problems[0]?.message ?? '', /unreachable/);
});
live.run();

// ---
interface EngineCtx {
  engine: EngineServer;
}
const engine = suite<EngineCtx>('probe :: what a real engine serves', {} as EngineCtx);
engine.before(async (ctx) => {
  ctx.engine = await startEngineServer({ status: STATUS_IN_ROUND, info: INFO_EXTERNAL });
});
engine.after((ctx) => ctx.engine.close());

/** Serves these bodies, probes the engine, and expects it to find no problem. */
async function probeClean(server: EngineServer, status: string, info: string) {
  Object.assign(server.bodies, { status, info });
  const d = await probe(`127.0.0.1:${server.port}`);
  assert.equal(d.result.problems, []);
  return d;
}

engine(
  'probe :: in a round, client hosted by the watchdog: game fields, launcher icons and a null icon, null hashes',
  async (ctx) => {
    const d = await probeClean(ctx.engine, STATUS_IN_ROUND, INFO_EXTERNAL);
    assert.is(d.status?.name, "Wizard's Den [EN] +18", 'the \\u escapes decoded');
    assert.equal(d.result.tags.explicit, ['lang:en', 'region:am_n_e', 'rp:low', '18+']);
    const status = d.result.status as Record<string, unknown>;
    assert.equal(
      [status.map, status.round_id, status.run_level, status.panic_bunker],
      ['Bagel Station', 51234, 1, false],
    );
    assert.equal(
      d.info?.links?.map((l) => l.icon),
      ['discord', 'web', 'wiki', 'github', 'forum', 'telegram', null],
    );
    assert.is(d.info?.build?.hash, null);
    assert.is(d.result.connectAddress, 'udp://play.example.net:1212/');
    const text = formatProbe(d);
    for (const part of [
      'Source [github] https://github.com',
      'Telegram [telegram]',
      'identifier wizden',
      'acz=false',
      'no problems',
    ]) {
      assert.ok(text.includes(part), `missing ${part} in:\n${text}`);
    }
    assert.match(text, /^link: +Rules https:\/\/example\.net\/rules$/m, 'a link without an icon shows none');
  },
);

engine(
  'probe :: in the lobby, hybrid ACZ build: no tags, map null, empty build strings, no links, no privacy policy',
  async (ctx) => {
    const d = await probeClean(ctx.engine, STATUS_LOBBY, INFO_ACZ);
    assert.equal(d.result.tags.explicit, []);
    assert.is((d.result.info as Record<string, unknown>).links, undefined, 'the payload really has no links');
    assert.is(d.info?.build?.acz, true);
    assert.is(d.result.connectAddress, `udp://127.0.0.1:${ctx.engine.port}/`);
    const text = formatProbe(d);
    for (const part of ['fork_id=custom', 'acz=true', 'no problems'])
      assert.ok(text.includes(part), `missing ${part} in:\n${text}`);
    assert.match(text, /^links: +\(none\)$/m);
    assert.match(text, /^privacy policy: +\(none\)$/m);
  },
);

engine('probe :: no build prepared: build null, auth disabled with a null public key', async (ctx) => {
  const d = await probeClean(ctx.engine, STATUS_LOBBY, INFO_NO_BUILD);
  assert.is(d.info?.build, null);
  assert.match(formatProbe(d), /^build: +\(none\)$/m);
});

engine('probe :: fields the launcher reads with fixed types are still checked', async (ctx) => {
  const bad = JSON.parse(STATUS_IN_ROUND) as Record<string, unknown>;
  Object.assign(ctx.engine.bodies, {
    status: JSON.stringify({ ...bad, run_level: 'InRound', round_start_time: 'yesterday' }),
    info: INFO_EXTERNAL.replace('"icon":"telegram"', '"icon":"Telegram"'),
  });
  const d = await probe(`127.0.0.1:${ctx.engine.port}`);
  assert.equal(
    d.result.problems.map((p) => p.path),
    ['status.run_level', 'status.round_start_time', 'info.links.5.icon'],
  );
  assert.match(d.result.problems[1]?.message ?? '', /ISO-8601/);
});
engine.run();
