/** A duration as its two largest units: `45s`, `2m 5s`, `1h 2m`, `3d 4h`. Negative counts as 0. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ];
  const parts: string[] = [];
  let rest = s;
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (parts.length > 0 || n > 0) parts.push(`${n}${name}`);
    if (parts.length === 2) break;
  }
  return parts.filter((p, i) => i === 0 || !p.startsWith('0')).join(' ');
}

/** How long ago an ISO-8601 timestamp was, relative to `now` (ms): `3s ago`; `never` for null or unparsable. */
export function formatAge(iso: string | null | undefined, now: number): string {
  if (!iso) return 'never';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return 'never';
  // The daemon's clock and ours can disagree by a few ms; a check-in is never in the future.
  return `${formatDuration((now - at) / 1000)} ago`;
}
