import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { formatAge, formatDuration } from '../../../src/cli/client/status-table.ts';

const duration = suite('formatDuration :: two largest units');

duration('format :: seconds, minutes, hours, days', () => {
  const seconds = [0, 3.9, 59, 60, 125, 3600, 3720, 3 * 86_400 + 4 * 3600 + 59, 86_400 + 30];
  assert.equal(seconds.map(formatDuration), ['0s', '3s', '59s', '1m', '2m 5s', '1h', '1h 2m', '3d 4h', '1d']);
});

duration('format :: negative counts as zero', () => {
  assert.is(formatDuration(-5), '0s');
});

duration.run();

// ---

const age = suite('formatAge :: how long ago');
const now = Date.parse('2024-05-01T12:00:00.000Z');

age('format :: an ISO timestamp becomes "Ns ago"', () => {
  assert.is(formatAge('2024-05-01T11:59:57.000Z', now), '3s ago');
  assert.is(formatAge('2024-05-01T11:57:55.000Z', now), '2m 5s ago');
  assert.is(formatAge('2024-05-01T10:00:00.000Z', now), '2h ago');
});

age('format :: null, missing or junk is "never"; a slightly future check-in is "0s ago"', () => {
  assert.is(formatAge(null, now), 'never');
  assert.is(formatAge(undefined, now), 'never');
  assert.is(formatAge('yesterday', now), 'never');
  assert.is(formatAge('2024-05-01T12:00:00.200Z', now), '0s ago');
});

age.run();
