/**
 * Snapshot ids: `<UTC time>-<revision>` (`20261128T031500Z-1f2e3d`), so names sort by time and say which build's
 * data they hold. The revision is reduced to characters safe in a file name and in a URL path segment.
 */

const ID = /^\d{8}T\d{6}Z(?:\.\d+)?-[A-Za-z0-9._-]{1,48}$/;

export function snapshotId(at: Date, revision: string | null, taken: ReadonlySet<string>): string {
  const time = at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
  const rev = (revision ?? 'none').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40) || 'none';
  let id = `${time}-${rev}`;
  // Two snapshots in one second (the one before a restore, then the restore's own): a counter keeps both.
  for (let n = 1; taken.has(id) && n < 1000; n++) id = `${time}.${n}-${rev}`;
  return id;
}

/** A snapshot id as a caller may send it: anything else is refused before it reaches the file system. */
export const isSnapshotId = (text: string): boolean => ID.test(text) && !text.includes('..');
