import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLoginLimits, type LoginLimitSettings } from '../../src/auth/login-limits.ts';
import { createSessionStore, type SessionSettings } from '../../src/auth/sessions.ts';

/** A clock the test moves by hand. */
const simulated = () => {
  const clock = { t: 1_000_000, now: () => clock.t };
  return clock;
};

const SESSION: SessionSettings = { absoluteMs: 60 * 60_000, idleMs: 10 * 60_000, max: 3 };
const owner = (name: string) => ({ kind: 'user' as const, name, fingerprint: `hash-of-${name}` });

const sessions = suite('auth :: sessions');

sessions('sessions :: an id is 256 random bits, found again, and its owner is kept', () => {
  const store = createSessionStore(() => SESSION, simulated().now);
  const id = store.create(owner('mo'));
  assert.is(Buffer.from(id, 'base64url').length, 32);
  assert.is(store.find(id)?.name, 'mo');
  assert.is(store.find(`${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`), undefined, 'one character changed');
  assert.is(store.find('forged'), undefined);
});

sessions('sessions :: a session idle for SessionIdleMinutes ends; a used one goes on until SessionMinutes', () => {
  const clock = simulated();
  const store = createSessionStore(() => SESSION, clock.now);
  const idle = store.create(owner('idle'));
  const busy = store.create(owner('busy'));
  for (let i = 0; i < 5; i++) {
    clock.t += SESSION.idleMs - 1;
    assert.ok(store.find(busy), `busy, round ${i}`);
  }
  assert.is(store.find(idle), undefined, 'idle past SessionIdleMinutes');
  clock.t += SESSION.absoluteMs;
  assert.is(store.find(busy), undefined, 'past SessionMinutes even though used');
  assert.is(store.size(), 0, 'expired sessions are forgotten');
});

sessions('sessions :: past MaxSessions the oldest ends first', () => {
  const store = createSessionStore(() => SESSION, simulated().now);
  const ids = ['a', 'b', 'c', 'd'].map((n) => store.create(owner(n)));
  assert.is(store.size(), 3);
  assert.is(store.find(ids[0] ?? ''), undefined, 'the oldest');
  for (const id of ids.slice(1)) assert.ok(store.find(id));
});

sessions('sessions :: end and endWhere end them; the store keeps no id in the clear', () => {
  const store = createSessionStore(() => SESSION, simulated().now);
  const a = store.create(owner('a'));
  const b = store.create(owner('b'));
  assert.ok(store.end(a));
  assert.not.ok(store.end(a), 'already ended');
  assert.is(store.find(a), undefined);
  assert.is(
    store.endWhere((s) => s.name === 'b'),
    1,
  );
  assert.is(store.find(b), undefined);
});

sessions.run();

// ---

const LIMITS: LoginLimitSettings = { perMinute: 6, freeFailures: 3, lockoutMs: 10_000, maxLockoutMs: 60_000 };
const limits = suite('auth :: login limits');

limits('limits :: a source gets perMinute attempts at once, then one each 60/perMinute s', () => {
  const clock = simulated();
  const l = createLoginLimits(() => LIMITS, clock.now);
  for (let i = 0; i < 6; i++) assert.is(l.admit('10.0.0.1', `user${i}`), null, `attempt ${i}`);
  const refused = l.admit('10.0.0.1', 'other');
  assert.is(refused?.reason, 'limited');
  assert.is(refused?.retryAfterMs, 10_000);
  assert.is(l.admit('10.0.0.2', 'other'), null, 'another source is not held');
  clock.t += 10_000;
  assert.is(l.admit('10.0.0.1', 'other'), null, 'refilled');
  assert.is(l.admit('10.0.0.1', 'other')?.reason, 'limited');
});

limits('limits :: failures past freeFailures lock the account for a time that doubles up to the cap', () => {
  const clock = simulated();
  const l = createLoginLimits(() => ({ ...LIMITS, perMinute: 1000 }), clock.now);
  const lockouts: number[] = [];
  for (let i = 0; i < 3; i++) {
    assert.is(l.admit('stranger', 'mo'), null);
    l.failed('mo');
  }
  for (let round = 0; round < 6; round++) {
    assert.is(l.admit('stranger', 'mo'), null, `round ${round}: not locked yet`);
    l.failed('mo');
    const block = l.admit('stranger', 'mo');
    assert.is(block?.reason, 'locked', `round ${round}`);
    lockouts.push(block?.retryAfterMs ?? 0);
    clock.t += block?.retryAfterMs ?? 0;
  }
  assert.equal(lockouts, [10_000, 20_000, 40_000, 60_000, 60_000, 60_000]);
});

limits('limits :: attempts during a lockout do not extend it; the real user gets in at the cap', () => {
  const clock = simulated();
  const l = createLoginLimits(() => ({ ...LIMITS, perMinute: 1_000_000 }), clock.now);
  for (let i = 0; i < 20; i++) {
    if (l.admit('stranger', 'mo') === null) l.failed('mo');
  }
  // The stranger hammers the locked account; none of it counts.
  for (let i = 0; i < 1000; i++) {
    clock.t += 50;
    l.admit('stranger', 'mo');
  }
  clock.t = 1_000_000 + LIMITS.maxLockoutMs;
  assert.is(l.admit('new-laptop', 'mo'), null, 'no later than the cap after the failure that locked it');
});

limits('limits :: a source the user logged in from is not held by a lockout a stranger caused', () => {
  const clock = simulated();
  const l = createLoginLimits(() => ({ ...LIMITS, perMinute: 1000 }), clock.now);
  assert.is(l.admit('home', 'mo'), null);
  l.succeeded('home', 'mo');
  for (let i = 0; i < 5; i++) if (l.admit('stranger', 'mo') === null) l.failed('mo');
  assert.is(l.admit('stranger', 'mo')?.reason, 'locked');
  assert.is(l.admit('elsewhere', 'mo')?.reason, 'locked');
  assert.is(l.admit('home', 'mo'), null, 'home still gets in');
});

limits('limits :: failures long apart are forgotten; a success forgets them', () => {
  const clock = simulated();
  const l = createLoginLimits(() => ({ ...LIMITS, perMinute: 1000 }), clock.now);
  for (let i = 0; i < 10; i++) {
    assert.is(l.admit('typo', 'mo'), null, `typo ${i}`);
    l.failed('mo');
    clock.t += 15 * 60_000;
  }
  for (let i = 0; i < 3; i++) l.failed('mo');
  l.succeeded('typo', 'mo');
  l.failed('mo');
  assert.is(l.admit('elsewhere', 'mo'), null, 'one failure after a success');
});

limits.run();
