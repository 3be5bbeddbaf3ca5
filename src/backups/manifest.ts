import * as v from 'valibot';

/**
 * What a snapshot holds, written beside its archive (`<id>.json`) and as `manifest.json` inside it, so a listing
 * reads small files and an archive carried elsewhere still says what it is.
 */

/** Why a snapshot was taken: before an install, by a person, on the schedule, or before a restore replaced the data. */
export const BACKUP_KINDS = ['before-update', 'manual', 'scheduled', 'before-restore'] as const;
export type BackupKind = (typeof BACKUP_KINDS)[number];

const FileSchema = v.object({
  /** Relative to the instance folder, with `/`: `data/prefs.db`, `config.toml`. */
  path: v.string(),
  bytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
  sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  /** Copied with SQLite's online backup, not byte for byte. */
  sqlite: v.optional(v.boolean()),
});

const ManifestSchema = v.object({
  format: v.literal(1),
  id: v.string(),
  instance: v.string(),
  kind: v.picklist(BACKUP_KINDS),
  takenAt: v.pipe(v.string(), v.isoTimestamp()),
  /** The build installed when the snapshot was taken. */
  revision: v.nullable(v.string()),
  /**
   * For `before-update`: the build installed after it, so a rollback finds the snapshot taken before it. Written as
   * the build the check found, then (beside the archive) as the one the install put in place, if another.
   */
  revisionAfter: v.nullable(v.string()),
  files: v.array(FileSchema),
  /** What was left out and why (a symbolic link, a socket). */
  skipped: v.array(v.object({ path: v.string(), reason: v.string() })),
  /** The sum of the files' sizes. */
  bytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
  /** The size of the compressed archive. */
  archiveBytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

export type BackupFile = v.InferOutput<typeof FileSchema>;
export type BackupManifest = v.InferOutput<typeof ManifestSchema>;

/** Parses a manifest read from disk; throws an Error saying which field is wrong. */
export function parseManifest(text: string, where: string): BackupManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`the backup manifest ${where} is not JSON: ${(err as Error).message}`, { cause: err });
  }
  const parsed = v.safeParse(ManifestSchema, raw);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  const at = issue.path?.map((p) => String(p.key)).join('.') ?? '(root)';
  throw new Error(`the backup manifest ${where} is not valid at ${at}: ${issue.message}`);
}

/**
 * Snapshot ids: `<UTC time>-<revision>` (`20261128T031500Z-1f2e3d`), so names sort by time and say which build's
 * data they hold. The revision is reduced to characters safe in a file name and in a URL path segment.
 */
const ID = /^\d{8}T\d{6}Z(?:\.\d+)?-[A-Za-z0-9._-]{1,48}$/;

export function snapshotId(at: Date, revision: string | null, taken: ReadonlySet<string>): string {
  const time = `${at.toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;
  const rev = (revision ?? 'none').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40) || 'none';
  let id = `${time}-${rev}`;
  // Two snapshots in one second (the one before a restore, then the restore's own): a counter keeps both.
  for (let n = 1; taken.has(id) && n < 1000; n++) id = `${time}.${n}-${rev}`;
  return id;
}

/** A snapshot id as a caller may send it: anything else is refused before it reaches the file system. */
export const isSnapshotId = (text: string): boolean => ID.test(text) && !text.includes('..');
