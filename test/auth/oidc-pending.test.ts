import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPendingLogins, type PendingLogin } from '../../src/auth/oidc-pending.ts';

const login = (n: number): PendingLogin => ({ verifier: `v${n}`, nonce: `n${n}`, fingerprint: 'f' });

const test = suite('auth :: logins begun at the OpenID provider');

test('pending :: a login is taken once: a second callback with its state finds nothing', () => {
  const p = createPendingLogins();
  p.add('s1', login(1));
  assert.equal(p.take('s1'), login(1));
  assert.is(p.take('s1'), undefined);
  assert.is(p.take('never-begun'), undefined);
});

test('pending :: past the cap the oldest are dropped, the newest kept', () => {
  const p = createPendingLogins({ max: 3 });
  for (let i = 1; i <= 5; i++) p.add(`s${i}`, login(i));
  assert.is(p.size(), 3);
  assert.is(p.take('s1'), undefined);
  assert.is(p.take('s2'), undefined);
  assert.equal(p.take('s5'), login(5));
});

test('pending :: a login expires after its time on the monotonic clock, not before', () => {
  let t = 1000;
  const p = createPendingLogins({ ttlMs: 60_000, now: () => t });
  p.add('old', login(1));
  t += 30_000;
  p.add('young', login(2));
  t += 29_999;
  assert.equal(p.take('old'), login(1), 'just inside its time');
  p.add('old2', login(3));
  t += 30_001;
  assert.is(p.take('young'), undefined, 'expired');
  assert.is(p.size(), 1, 'expired ones are swept, not only refused');
});

test.run();
