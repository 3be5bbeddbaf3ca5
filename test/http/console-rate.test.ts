import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createConsoleRate } from '../../src/http/console-routes.ts';

const test = suite('console-rate');

test('console-rate :: each caller gets its own commands a minute; the window slides', () => {
  const rate = createConsoleRate();
  const t0 = 1_000_000;
  assert.ok(rate.admit('a', 2, t0));
  assert.ok(rate.admit('a', 2, t0 + 10));
  assert.not.ok(rate.admit('a', 2, t0 + 20), 'the third within a minute is refused');
  assert.ok(rate.admit('b', 2, t0 + 20), 'another caller is not held back by the first');
  assert.not.ok(rate.admit('a', 2, t0 + 59_999), 'still inside the minute of the first');
  assert.ok(rate.admit('a', 2, t0 + 60_000), 'the first has left the window');
  assert.not.ok(rate.admit('a', 2, t0 + 60_001), 'the second is still inside it');
});

test('console-rate :: a refusal takes nothing, so a caller over the rate is not kept out longer', () => {
  const rate = createConsoleRate();
  assert.ok(rate.admit('a', 1, 0));
  for (let i = 1; i <= 5; i++) assert.not.ok(rate.admit('a', 1, i * 1000));
  assert.ok(rate.admit('a', 1, 60_000));
});

test('console-rate :: thousands of callers: the table stays bounded and the caller answered keeps its count', () => {
  const rate = createConsoleRate();
  for (let i = 0; i < 5000; i++) assert.ok(rate.admit(`caller ${i}`, 1, i));
  assert.not.ok(rate.admit('caller 4999', 1, 5000), 'the newest caller was kept');
});

test.run();
