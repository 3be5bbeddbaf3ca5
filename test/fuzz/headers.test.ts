/**
 * Fuzzing what the daemon and the kit read out of headers and bodies: HTTP Basic (`parseBasicAuth`, and the
 * decisions built on it, `authorize` and the admin rule's Host check), the kit's `WatchdogToken` check and the
 * `/shutdown` and `/update` bodies. None may throw on anything a client sends, and Basic must round-trip.
 */
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isLoopback } from '../../src/config/listen.ts';
import { isLoopbackHost } from '../../src/http/admin-auth.ts';
import { parseBasicAuth } from '../../src/http/basic-auth.ts';
import { authorize } from '../../src/http/instance-auth.ts';
import { shownKey } from '../../src/http/request-info.ts';
import {
  checkWatchdogToken,
  parseShutdownBody,
  parseUpdateBody,
  sameSecret,
  UPDATE_REASONS,
} from '../../src/kit/api-watchdog.ts';
import { memoryInstance, memoryRegistry } from '../http/_support/app.ts';
import { binaryString, fuzz } from './_support/fuzz.ts';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** Header values as clients send them: Basic-looking ones (good, broken, odd spacing and case) and junk. */
const basicish: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('Basic', 'basic', 'BASIC', 'Bearer', 'Basic:', 'Basi', ''),
      fc.constantFrom(' ', '  ', '\t', '', '\n'),
      fc.oneof(
        fc.base64String({ maxLength: 40 }),
        binaryString({ maxLength: 30 }).map(b64),
        fc.uint8Array({ maxLength: 24 }).map((u) => Buffer.from(u).toString('base64')),
        fc.string({ maxLength: 30 }),
      ),
      fc.constantFrom('', '=', '==', '===', ' ', '*', '\r\n'),
    )
    .map((parts) => parts.join('')),
  binaryString({ maxLength: 60 }),
);

/** A user name as Basic can carry it (the first colon ends it) and any password (colons kept). */
const user = binaryString({ maxLength: 20 }).filter((u) => !u.includes(':'));
const password = fc.oneof(binaryString({ maxLength: 40 }), fc.constantFrom(':', '::', 'a:b', ':x:'));

const basic = suite('fuzz/basic auth');

basic('fuzz/basic :: parseBasicAuth never throws, and "ok" credentials are what the base64 says', async () => {
  await fuzz(
    'basic/parse',
    fc.property(fc.option(basicish, { nil: undefined }), (header) => {
      const r = parseBasicAuth(header);
      assert.ok(['ok', 'missing', 'malformed'].includes(r.kind), r.kind);
      if (r.kind !== 'ok') return;
      assert.not.ok(r.user.includes(':'), 'the first colon ends the user name');
      // What follows the scheme and its spacing; Buffer's lenient decoder agrees with the strict one on valid input.
      const encoded = (header ?? '').replace(/^[\t ]*[^\t ]+[\t ]+/, '');
      assert.is(Buffer.from(encoded, 'base64').toString('utf8'), `${r.user}:${r.password}`);
    }),
    { seed: 0xba51c_01, numRuns: 3000 },
  );
});

basic(
  'fuzz/basic :: user:password encoded, under any scheme case and spacing, parses back to the same pair',
  async () => {
    await fuzz(
      'basic/round-trip',
      fc.property(
        user,
        password,
        fc.mixedCase(fc.constant('basic')),
        fc.constantFrom(' ', '\t', '  ', ' \t'),
        fc.constantFrom('', ' ', '\t'),
        (u, p, scheme, gap, lead) => {
          const header = `${lead}${scheme}${gap}${b64(`${u}:${p}`)}`;
          assert.equal(parseBasicAuth(header), { kind: 'ok', user: u, password: p });
        },
      ),
      { seed: 0xba51c_02, numRuns: 3000 },
    );
  },
);

basic('fuzz/basic :: authorize never throws and follows the documented order on any header and key', async () => {
  const registry = memoryRegistry(memoryInstance('alpha', { apiToken: 'tok:en', secret: 's3cret' }));
  await fuzz(
    'basic/authorize',
    fc.property(
      fc.oneof(
        basicish,
        fc.tuple(fc.constantFrom('alpha', 'ghost', 'ALPHA'), password).map(([u, p]) => `Basic ${b64(`${u}:${p}`)}`),
      ),
      fc.constantFrom('alpha', 'ghost', ''),
      fc.constantFrom('apiToken', 'checkinSecret') as fc.Arbitrary<'apiToken' | 'checkinSecret'>,
      (header, key, credential) => {
        const r = authorize(header, key, registry, credential);
        const creds = parseBasicAuth(header);
        if (creds.kind === 'missing') return assert.equal([r.ok, !r.ok && r.status], [false, 401]);
        if (creds.kind === 'malformed') return assert.equal([r.ok, !r.ok && r.status], [false, 400]);
        if (creds.user !== key) return assert.equal([r.ok, !r.ok && r.status], [false, 403]);
        if (key !== 'alpha') return assert.equal([r.ok, !r.ok && r.status], [false, 404]);
        const right = credential === 'apiToken' ? 'tok:en' : 's3cret';
        assert.is(r.ok, creds.password === right, `password ${JSON.stringify(creds.password)}`);
        if (!r.ok) assert.is(r.status, 401);
        assert.not.match(r.ok ? '' : r.reason, creds.password || '\u0000never', 'a reason never repeats the password');
      },
    ),
    { seed: 0xba51c_03, numRuns: 2000 },
  );
});

basic('fuzz/basic :: sameSecret is string equality, for any pair', async () => {
  await fuzz(
    'basic/secrets-equal',
    fc.property(password, password, fc.boolean(), (a, b, same) => {
      const other = same ? a : b;
      assert.is(sameSecret(a, other), a === other);
    }),
    { seed: 0xba51c_04, numRuns: 2000 },
  );
});

basic('fuzz/basic :: the admin rule reads any Host and address without throwing', async () => {
  const host = fc.oneof(
    fc.constantFrom('localhost', 'localhost:5000', '[::1]:80', '127.0.0.1', 'a.localhost', '[', ']:1', ':', '[::1', ''),
    binaryString({ maxLength: 30 }),
  );
  await fuzz(
    'basic/loopback-host',
    fc.property(host, (h) => {
      const local = isLoopbackHost(h);
      assert.type(local, 'boolean');
      assert.type(isLoopback(h), 'boolean');
      // Anything naming another machine is never taken for this one.
      if (local)
        assert.match(h.trim().toLowerCase(), /^(\[[^\]]+\]|localhost|[^:]*\.localhost|127\.|::1|::ffff:127\.)/);
      const shown = shownKey(h);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what must not be shown
      assert.not.match(shown, /[\u0000-\u001f\u007f-\u009f]/);
    }),
    { seed: 0xba51c_05, numRuns: 2000 },
  );
});

basic.run();

// ---

const kit = suite('fuzz/kit watchdog API');

kit('fuzz/kit :: the WatchdogToken check never throws and lets in exactly the configured token', async () => {
  const token = fc.oneof(binaryString({ maxLength: 20 }), fc.constant(undefined));
  await fuzz(
    'kit/watchdog-token',
    fc.property(token, token, fc.boolean(), (header, expected, same) => {
      const given = same ? expected : header;
      const r = checkWatchdogToken(given, expected);
      if (!expected) return assert.equal(r, { status: 404, body: 'Not Found' });
      if (given === undefined) return assert.is(r?.status, 400);
      assert.is(r === undefined, given === expected);
      if (r) assert.is(r.status, 401);
    }),
    { seed: 0x0c17_01, numRuns: 2000 },
  );
});

/** Bodies as servers receive them: JSON of any shape, JSON with the real fields, truncated JSON and junk. */
const body: fc.Arbitrary<string> = fc.oneof(
  fc.json({ maxDepth: 2 }),
  fc
    .record(
      {
        Reason: fc.oneof(
          fc.string(),
          fc.constantFrom(...UPDATE_REASONS, '0', '1', '2', '3', '99999999999999999999'),
          fc.jsonValue(),
        ),
        Message: fc.oneof(fc.string(), fc.jsonValue()),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.json().map((j) => j.slice(0, Math.max(0, j.length - 1))),
  binaryString({ maxLength: 40 }),
  fc.constantFrom('', ' ', '\n', '{', '{}', '[]', 'null', '{"__proto__":{"Reason":1}}', '{"Reason":null}'),
);

kit('fuzz/kit :: /shutdown and /update bodies parse or are refused with a reason, never throw', async () => {
  await fuzz(
    'kit/bodies',
    fc.property(body, (text) => {
      const shutdown = parseShutdownBody(text);
      if (shutdown.ok) {
        const reason = shutdown.value.reason;
        assert.ok(reason === null || typeof reason === 'string');
      } else assert.ok(shutdown.error.length > 0);
      const update = parseUpdateBody(text);
      if (update.ok) {
        assert.ok((UPDATE_REASONS as readonly string[]).includes(update.value.reason), update.value.reason);
        assert.ok(update.value.message === null || typeof update.value.message === 'string');
      } else assert.ok(update.error.length > 0);
    }),
    { seed: 0x0c17_02, numRuns: 3000 },
  );
});

kit('fuzz/kit :: a Reason and Message sent as JSON come back as sent (known names kept, others Other)', async () => {
  await fuzz(
    'kit/update-round-trip',
    fc.property(
      binaryString({ maxLength: 20 }),
      fc.option(fc.string({ maxLength: 20 }), { nil: null }),
      (reason, message) => {
        const shutdown = parseShutdownBody(JSON.stringify({ Reason: reason }));
        assert.equal(shutdown, { ok: true, value: { reason } });
        const update = parseUpdateBody(JSON.stringify({ Reason: reason, Message: message }));
        if (!update.ok) return assert.unreachable(update.error);
        assert.is(update.value.message, message);
        const known = (UPDATE_REASONS as readonly string[]).includes(reason);
        if (known) assert.is(update.value.reason, reason);
        else if (!/^\d+$/.test(reason)) assert.is(update.value.reason, 'Other');
      },
    ),
    { seed: 0x0c17_03, numRuns: 2000 },
  );
});

kit.run();
