import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  base32Decode,
  base32Encode,
  createTotpGuard,
  hotp,
  isTotpSecret,
  matchingStep,
  newTotpSecret,
  otpauthUri,
  stepAt,
  totpAt,
} from '../../src/auth/totp.ts';
import { parseUsers } from '../../src/auth/users-file.ts';
import { fastHash } from './_support/hash.ts';

const test = suite('auth :: TOTP (RFC 6238)');

/** RFC 6238 appendix B, the SHA-1 rows: the ASCII seed "12345678901234567890", 8 digits. */
const SEED = Buffer.from('12345678901234567890', 'ascii');
const RFC_SHA1: ReadonlyArray<[number, string]> = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

test('totp :: the RFC 6238 SHA-1 test vectors, 8 digits and their last 6', () => {
  const secret = base32Encode(SEED);
  assert.is(secret, 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', 'RFC 4648 base32 of the seed');
  for (const [seconds, code] of RFC_SHA1) {
    assert.is(hotp(SEED, stepAt(seconds * 1000), 8), code, `T=${seconds}`);
    assert.is(totpAt(secret, seconds * 1000), code.slice(-6), `T=${seconds}, 6 digits`);
  }
});

test('totp :: RFC 4226 appendix D HOTP values of the same seed', () => {
  const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
  assert.equal(
    expected.map((_, i) => hotp(SEED, i)),
    expected,
  );
});

test('totp :: base32 round-trips; a new secret is 160 bits a users file accepts', () => {
  for (const n of [0, 1, 5, 16, 20, 33]) {
    const bytes = Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + 11) & 0xff));
    assert.equal(base32Decode(base32Encode(bytes)), bytes, `${n} bytes`);
  }
  const secret = newTotpSecret();
  assert.is(secret.length, 32);
  assert.ok(isTotpSecret(secret));
  assert.is.not(newTotpSecret(), secret);
  assert.throws(() => base32Decode('ABC1'), /"1" is not a base32 character/);
  for (const bad of ['short', 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ='.toLowerCase(), 'GEZDGNBVGY3TQOJQGEZDGNBVG1', ''])
    assert.not.ok(isTotpSecret(bad), bad);
});

test('totp :: a code matches within one step either side, and no further', () => {
  const secret = base32Encode(SEED);
  const t = 1_111_111_111_000;
  const code = totpAt(secret, t);
  assert.is(matchingStep(secret, code, t), stepAt(t));
  assert.is(matchingStep(secret, code, t + 30_000), stepAt(t), 'one step later');
  assert.is(matchingStep(secret, code, t - 30_000), stepAt(t), 'one step earlier');
  assert.is(matchingStep(secret, code, t + 60_000), undefined, 'two steps later');
  assert.is(matchingStep(secret, '12345', t), undefined, 'not six digits');
  assert.is(matchingStep(secret, `${code} `, t), undefined);
});

test('totp :: the guard accepts a code once per user; a replay within its window is refused', () => {
  const guard = createTotpGuard();
  const secret = base32Encode(SEED);
  const t = 1_234_567_890_000;
  const code = totpAt(secret, t);
  assert.ok(guard.accept('alice', secret, code, t));
  assert.not.ok(guard.accept('alice', secret, code, t), 'the same code again');
  assert.not.ok(guard.accept('alice', secret, code, t + 25_000), 'the same code later in its window');
  assert.not.ok(guard.accept('alice', secret, totpAt(secret, t - 30_000), t), 'an older step after a newer one');
  assert.ok(guard.accept('bob', secret, code, t), 'another user is another count');
  assert.ok(guard.accept('alice', secret, totpAt(secret, t + 30_000), t + 30_000), 'the next step');
  const wrong = String((Number(totpAt(secret, t + 60_000)) + 1) % 1_000_000).padStart(6, '0');
  assert.not.ok(guard.accept('alice', secret, wrong, t + 60_000), 'a wrong code');
  assert.ok(guard.accept('alice', secret, totpAt(secret, t + 60_000), t + 60_000), 'a wrong code spends nothing');
});

test('totp :: otpauth URI names the issuer, the user and the secret', () => {
  const uri = new URL(otpauthUri('alice', 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'));
  assert.is(uri.protocol, 'otpauth:');
  assert.is(uri.host, 'totp');
  assert.is(decodeURIComponent(uri.pathname), '/watchdog:alice');
  assert.is(uri.searchParams.get('secret'), 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  assert.is(uri.searchParams.get('issuer'), 'watchdog');
  assert.is(uri.searchParams.get('digits'), '6');
  assert.is(uri.searchParams.get('period'), '30');
});

test('totp :: the users file takes Totp, and names the user of a malformed one without showing it', async () => {
  const h = await fastHash('pw-123456');
  const good = parseUsers(
    `Users:\n  alice:\n    Password: "${h}"\n    Totp: GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\n`,
    'users.yml',
  );
  assert.ok(good.ok);
  if (good.ok) assert.is(good.db.users.get('alice')?.totp, 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  const bad = parseUsers(`Users:\n  bob:\n    Password: "${h}"\n    Totp: not-a-secret-0189\n`, 'users.yml');
  assert.not.ok(bad.ok);
  if (bad.ok) return;
  assert.is(bad.problems.length, 1, bad.problems.join('\n'));
  assert.match(bad.problems[0]!, /^users\.yml: Users\.bob\.Totp: expected a base32 secret/);
  assert.not.match(bad.problems[0]!, /not-a-secret/);
});

test.run();
