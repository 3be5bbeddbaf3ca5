/**
 * For snapshots, dumps and rotated logs: keep the newest `keep` and anything younger than `keepDays`, then drop the
 * oldest while over `maxBytes`, never the newest (a snapshot is not deleted by its own retention).
 */
export interface RetentionRule {
  keep: number;
  keepDays: number;
  maxBytes: number;
}

export interface Retained {
  id: string;
  at: number;
  bytes: number;
}

const DAY_MS = 86_400_000;

export function expired<T extends Retained>(items: readonly T[], rule: RetentionRule, now: number): T[] {
  const newestFirst = [...items].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
  // KeepDays 0 keeps nothing by age: a file time can lie a fraction of a millisecond past an integer `now`.
  const young = (item: T) => rule.keepDays > 0 && now - item.at < rule.keepDays * DAY_MS;
  const kept = newestFirst.filter((item, i) => i < Math.max(1, rule.keep) || young(item));
  let total = kept.reduce((sum, item) => sum + item.bytes, 0);
  for (let i = kept.length - 1; i > 0 && total > rule.maxBytes; i--) {
    total -= kept[i]?.bytes ?? 0;
    kept.splice(i, 1);
  }
  const keep = new Set(kept);
  return newestFirst.filter((item) => !keep.has(item)).reverse();
}

const GB = 1_000_000_000;

export const retentionRule = (r: { Keep: number; KeepDays: number; MaxSizeGB: number }): RetentionRule => ({
  keep: r.Keep,
  keepDays: r.KeepDays,
  maxBytes: r.MaxSizeGB * GB,
});
