/**
 * Fuzzing what the game-server kit (src/kit/) reads from outside: its HTTP API (`createGameApi`) with random
 * methods, paths, `WatchdogToken` headers and bodies; the launcher-style server addresses of the probe; the engine
 * command line; status tags. Nothing may throw anything but the kit's own errors (which say what is wrong), the API
 * never answers 500, and the right token with a valid body always reaches the game.
 */
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createGameApi, type ShutdownRequest, type UpdateRequest } from '../../src/kit/api.ts';
import { AddressError, normaliseAddress } from '../../src/kit/probe.ts';
import { parseArgs, SettingsError } from '../../src/kit/settings.ts';
import { inferTags, validateTags } from '../../src/kit/tags.ts';
import { recordingLogger } from '../http/_support/app.ts';
import { binaryString, fuzz, webPath } from './_support/fuzz.ts';

const TOKEN = 'game:token';

/** Header values fetch accepts (no CR, LF or NUL), so a refusal is the app's and not the test's. */
const printable = (max: number) => fc.string({ maxLength: max }).filter((s) => /^[\t\x20-\x7e]*$/.test(s));

const kitRequest = fc.record({
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'post'),
  path: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('/status', '/info', '/shutdown', '/update', '/update/', '/Shutdown') },
    { weight: 1, arbitrary: webPath().map((p) => (p.startsWith('/') ? p : `/${p}`)) },
  ),
  token: fc.oneof(fc.constantFrom(TOKEN, `${TOKEN} `, 'game', ''), printable(20), fc.constant(undefined)),
  body: fc.oneof(
    fc.constantFrom('', '{}', '{"Reason":"maintenance"}', '{"Reason":"2","Message":"m"}', '{"Reason":3}', '[]', '{'),
    fc.json({ maxDepth: 2 }),
    binaryString({ maxLength: 60 }),
  ),
  contentType: fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', undefined),
  /** Whether the server has a `watchdog.token` at all. */
  tokenSet: fc.boolean(),
});

const kit = suite('fuzz/kit');

kit(
  'fuzz/kit :: the game API answers anything below 500, and a right token with a valid body reaches the game',
  async () => {
    const shutdowns: ShutdownRequest[] = [];
    const updates: UpdateRequest[] = [];
    let tokenSet = true;
    const log = recordingLogger('kit');
    const app = createGameApi({
      status: () => ({ name: 'fuzz', players: 0 }),
      info: () => ({
        connect_address: 'udp://127.0.0.1:1212/',
        auth: { mode: 'Disabled', public_key: 'k' },
        build: null,
      }),
      watchdogToken: () => (tokenSet ? TOKEN : undefined),
      onShutdown: (r) => void shutdowns.push(r),
      onUpdate: (r) => void updates.push(r),
      log,
    });
    await fuzz(
      'kit/game-api',
      fc.asyncProperty(kitRequest, async (r) => {
        tokenSet = r.tokenSet;
        const headers: Record<string, string> = {};
        if (r.token !== undefined) headers.WatchdogToken = r.token;
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        const method = r.method.toUpperCase();
        const withBody = method !== 'GET' && method !== 'HEAD';
        const before = shutdowns.length + updates.length;
        const res = await app.request(r.path, { method: r.method, headers, body: withBody ? r.body : undefined });
        await res.arrayBuffer();
        assert.ok(res.status < 500, `${r.method} ${r.path} → ${res.status}`);
        const acted = shutdowns.length + updates.length - before;
        const watchdogRoute = method === 'POST' && (r.path === '/shutdown' || r.path === '/update');
        if (!watchdogRoute) return assert.is(acted, 0);
        const parsed = r.path === '/shutdown' ? parseShutdown(r.body) : parseUpdate(r.body);
        // HTTP drops the spaces and tabs around a header value (RFC 9110 5.5), so `game:token ` arrives as the token.
        const allowed = r.tokenSet && r.token?.replace(/^[\t ]+|[\t ]+$/g, '') === TOKEN && parsed;
        assert.is(
          res.status === 200,
          allowed,
          `${r.method} ${r.path} token ${JSON.stringify(r.token)} → ${res.status}`,
        );
        assert.is(acted, allowed ? 1 : 0);
      }),
      { seed: 0x617_01, numRuns: 800 },
    );
    assert.ok(shutdowns.length > 0 && updates.length > 0, 'the right token and body reached the game sometimes');
    assert.not.ok(
      log.lines.some((l) => l.startsWith('error')),
      log.lines.join('\n'),
    );
  },
);

/** The body rules as README and the engine state them, independently of the parser: a JSON object, string fields. */
function isObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
const stringOrNone = (v: unknown) => v === undefined || v === null || typeof v === 'string';
const parseShutdown = (text: string) => {
  const o = isObject(text);
  return o !== null && stringOrNone(o.Reason);
};
const parseUpdate = (text: string) => {
  if (text.trim() === '') return true;
  const o = isObject(text);
  return o !== null && stringOrNone(o.Reason) && stringOrNone(o.Message);
};

kit(
  'fuzz/kit :: any server address is read or refused with an AddressError; read ones end in / under http(s)',
  async () => {
    const address = fc.oneof(
      fc
        .tuple(
          fc.constantFrom('', 'ss14://', 'ss14s://', 'http://', 'https://', 'udp://', 'SS14://', '://', 'ss14:'),
          fc.oneof(
            fc.domain(),
            fc.ipV4(),
            fc.ipV6().map((ip) => `[${ip}]`),
            fc.constantFrom('', '[', ':', '@', '..'),
          ),
          fc.constantFrom('', ':0', ':1212', ':65535', ':65536', ':x', ':'),
          fc.constantFrom('', '/', '/path', '/a b', '?q#f', '/%zz'),
        )
        .map((parts) => parts.join('')),
      binaryString({ maxLength: 40 }),
    );
    await fuzz(
      'kit/address',
      fc.property(address, (input) => {
        try {
          const a = normaliseAddress(input);
          assert.match(a.api.protocol, /^https?:$/);
          assert.ok(a.api.pathname.endsWith('/'), a.api.href);
          assert.is(a.statusUrl.href, new URL('status', a.api).href);
          assert.is(a.infoUrl.host, a.api.host);
        } catch (err) {
          if (!(err instanceof AddressError)) throw err;
          assert.ok(err.message.length > 0);
        }
      }),
      { seed: 0x617_02, numRuns: 3000 },
    );
  },
);

kit(
  'fuzz/kit :: any command line parses or fails with a SettingsError; --cvar keeps everything after the first =',
  async () => {
    const arg = fc.oneof(
      fc.constantFrom('--cvar', '--config-file', '--data-dir', '--loglevel', '--mount-zip', '--x', '-', ''),
      fc.string({ maxLength: 12 }),
    );
    await fuzz(
      'kit/args',
      fc.property(
        fc.array(arg, { maxLength: 8 }),
        fc.string({ maxLength: 8 }),
        fc.string({ maxLength: 12 }),
        (argv, name, value) => {
          try {
            const parsed = parseArgs(argv);
            assert.ok(parsed.warnings.every((w) => w.length > 0));
          } catch (err) {
            if (!(err instanceof SettingsError)) throw err;
          }
          const key = name.replaceAll('=', '').trim();
          if (key === '') return;
          assert.equal(parseArgs(['--cvar', `${key}=${value}`]).cvars, [[key, value]]);
        },
      ),
      { seed: 0x617_03, numRuns: 3000 },
    );
  },
);

kit('fuzz/kit :: any tags and names are validated and inferred without throwing', async () => {
  const tag = fc.oneof(
    fc.constantFrom('lang:en', 'lang:', 'region:eu_w', 'region:', 'rp:high', 'rp:x', '18+', 'no_tag_infer', ':'),
    fc.string({ maxLength: 12 }),
  );
  await fuzz(
    'kit/tags',
    fc.property(fc.array(tag, { maxLength: 6 }), binaryString({ maxLength: 40 }), (tags, name) => {
      for (const p of validateTags(tags)) assert.ok(p.message.length > 0);
      const inferred = inferTags(name, tags);
      assert.ok(Array.isArray(inferred) && inferred.every((t) => typeof t === 'string'));
    }),
    { seed: 0x617_04, numRuns: 2000 },
  );
});

kit.run();
