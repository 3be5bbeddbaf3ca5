import * as v from 'valibot';

/*
 * Written beside its archive (`<id>.json`), for listings, and inside as `manifest.json`, so an archive carried
 * elsewhere still says what it is.
 */

const BACKUP_KINDS = ['before-update', 'manual', 'scheduled', 'before-restore'] as const;
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
  revision: v.nullable(v.string()),
  /** For `before-update`: the build installed after it (first the one the check found), for rollbacks. */
  revisionAfter: v.nullable(v.string()),
  files: v.array(FileSchema),
  /** A symbolic link or socket left out, and why. */
  skipped: v.array(v.object({ path: v.string(), reason: v.string() })),
  bytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
  archiveBytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

export type BackupFile = v.InferOutput<typeof FileSchema>;
export type BackupManifest = v.InferOutput<typeof ManifestSchema>;

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

/** `<UTC time>-<revision>` (`20261128T031500Z-1f2e3d`): sorted by time, safe in a file name and a URL path. */
const ID = /^\d{8}T\d{6}Z(?:\.\d+)?-[A-Za-z0-9._-]{1,48}$/;

export function snapshotId(at: Date, revision: string | null, taken: ReadonlySet<string>): string {
  const time = `${at.toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;
  const rev = (revision ?? 'none').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40) || 'none';
  let id = `${time}-${rev}`;
  // Two snapshots in one second (the one before a restore, then the restore's own): a counter keeps both.
  for (let n = 1; taken.has(id) && n < 1000; n++) id = `${time}.${n}-${rev}`;
  return id;
}

/** Anything else a caller sends is refused before it reaches the file system. */
export const isSnapshotId = (text: string): boolean => ID.test(text) && !text.includes('..');
