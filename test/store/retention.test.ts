import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expired, type Retained } from '../../src/store/retention.ts';

const DAY = 86_400_000;
const NOW = Date.parse('2026-11-28T00:00:00Z');
const item = (id: string, daysAgo: number, bytes = 1): Retained => ({ id, at: NOW - daysAgo * DAY, bytes });
const ids = (items: Retained[]) => items.map((i) => i.id);

const test = suite('retention');

test('retention :: keeps the newest N and anything younger than D days', () => {
  const items = [item('a', 30), item('b', 20), item('c', 10), item('d', 5), item('e', 1)];
  assert.equal(ids(expired(items, { keep: 2, keepDays: 7, maxBytes: 1e9 }, NOW)), ['a', 'b', 'c']);
  assert.equal(ids(expired(items, { keep: 4, keepDays: 0, maxBytes: 1e9 }, NOW)), ['a']);
  assert.equal(ids(expired(items, { keep: 0, keepDays: 15, maxBytes: 1e9 }, NOW)), ['a', 'b']);
});

test('retention :: the size cap removes the oldest of what is kept, never the newest', () => {
  const items = [item('a', 3, 50), item('b', 2, 50), item('c', 1, 50)];
  assert.equal(ids(expired(items, { keep: 10, keepDays: 30, maxBytes: 100 }, NOW)), ['a']);
  assert.equal(ids(expired(items, { keep: 10, keepDays: 30, maxBytes: 10 }, NOW)), ['a', 'b']);
});

test('retention :: order of the input does not matter; same time breaks ties by id', () => {
  const items = [item('x2', 1), item('x1', 1), item('x3', 1)];
  assert.equal(ids(expired(items, { keep: 1, keepDays: 0, maxBytes: 1e9 }, NOW)), ['x1', 'x2']);
});

test('retention :: KeepDays 0 keeps nothing by age, even an item stamped a fraction of a millisecond past now', () => {
  // A file's mtimeMs has a fraction; Date.now() has none: the newest rotated log can look "in the future".
  const items = [
    { id: 'a', at: NOW - 5, bytes: 1 },
    { id: 'b', at: NOW + 0.8, bytes: 1 },
    { id: 'c', at: NOW + 0.9, bytes: 1 },
  ];
  assert.equal(ids(expired(items, { keep: 1, keepDays: 0, maxBytes: 1e9 }, NOW)), ['a', 'b']);
});

test.run();
