import * as v from 'valibot';
import { UpdateError } from '../../errors.ts';

/*
 * The manifest as Robust.Cdn serves it and the real watchdog reads it: extra fields ignored, field names matched
 * case-insensitively (System.Text.Json's web defaults), the keys of `builds` and `server` kept. publish.ts writes
 * with these types and checks against this schema.
 */

/** Renames keys matching one of `names` but for case to it; the last one wins, as System.Text.Json does. */
function canonicalKeys(input: unknown, names: readonly string[]): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const byLower = new Map(names.map((name) => [name.toLowerCase(), name]));
  // fromEntries defines own properties, so a "__proto__" key stays a key instead of replacing the prototype.
  return Object.fromEntries(
    Object.entries(input).map(([key, value]) => [byLower.get(key.toLowerCase()) ?? key, value]),
  );
}

function fields<const T extends v.ObjectEntries>(entries: T, message?: string) {
  const names = Object.keys(entries);
  return v.pipe(
    v.unknown(),
    v.transform((input) => canonicalKeys(input, names)),
    v.looseObject(entries, message),
  );
}

const IsoTime = v.pipe(
  v.string('expected an ISO-8601 time string'),
  v.check((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO-8601 time such as 2024-05-01T12:00:00Z'),
);
const ArchiveRef = fields({
  url: v.pipe(v.string('expected a URL string'), v.minLength(1, 'expected a URL')),
  sha256: v.optional(v.string('expected a hex string')),
});

export const ManifestSchema = fields(
  {
    builds: v.record(
      v.string(),
      fields({
        time: IsoTime,
        client: v.optional(ArchiveRef),
        server: v.optional(v.record(v.string(), ArchiveRef, 'expected a map of platform to archive'), {}),
      }),
      'expected a map of build key to build',
    ),
  },
  'expected an object with "builds"',
);

export type ManifestDoc = v.InferOutput<typeof ManifestSchema>;
export type ManifestBuild = ManifestDoc['builds'][string];
export type ManifestArchive = v.InferOutput<typeof ArchiveRef>;

export function parseManifest(data: unknown, where: string): ManifestDoc {
  const result = v.safeParse(ManifestSchema, data);
  if (result.success) return result.output;
  const problems = result.issues.slice(0, 5).map((issue) => `${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`);
  throw new UpdateError(`the manifest at ${where} does not have the expected shape: ${problems.join('; ')}`);
}

/**
 * Greatest `time`; on equal times the later entry in the document (as the real watchdog), which is key order but for
 * integer-like keys (real build keys are timestamps or hashes).
 */
export function newestBuild(doc: ManifestDoc): { key: string; build: ManifestBuild } | undefined {
  let best: { key: string; build: ManifestBuild; time: number } | undefined;
  for (const [key, build] of Object.entries(doc.builds)) {
    const time = Date.parse(build.time);
    if (!best || time >= best.time) best = { key, build, time };
  }
  return best && { key: best.key, build: best.build };
}
