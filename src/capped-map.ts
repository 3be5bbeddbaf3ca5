/**
 * Sets `key` last in `map` (insertion order is age), first dropping the oldest entries down to `max - 1`: the one
 * bound on every table a stranger can add to (sessions, login limits, pending sign-ins, console callers).
 */
export function setCapped<V>(map: Map<string, V>, key: string, value: V, max: number): V {
  map.delete(key);
  for (const oldest of map.keys()) {
    if (map.size < max) break;
    map.delete(oldest);
  }
  map.set(key, value);
  return value;
}
