import * as v from 'valibot';
import { UpdateError } from '../../errors.ts';

/**
 * The manifest document, as Robust.Cdn serves it and the real watchdog's `UpdateProviderManifest.cs` reads it. Extra
 * fields (`size`, …) are accepted and ignored. Field names match case-insensitively, as the original reads it with
 * System.Text.Json's case-insensitive web defaults; the keys of `builds` (build ids) and `server` (platforms) are
 * data and keep their case. `watchdog manifest` (publish.ts) writes with these types and checks what it adds
 * against this schema, so the writer never produces a build the reader refuses.
 */

/**
 * Renames the keys of `input` that match one of `names` ignoring case to that name, so `{"Builds": …}` validates
 * as `{"builds": …}`. When several keys match one name the last in the document wins, as System.Text.Json
 * overwrites a property it reads twice. Other keys, and anything but a plain object, pass through untouched.
 */
function canonicalKeys(input: unknown, names: readonly string[]): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const byLower = new Map(names.map((name) => [name.toLowerCase(), name]));
  // fromEntries defines own properties, so a "__proto__" key stays a key instead of replacing the prototype.
  return Object.fromEntries(
    Object.entries(input).map(([key, value]) => [byLower.get(key.toLowerCase()) ?? key, value]),
  );
}

/** `v.looseObject(entries)` whose field names match case-insensitively (see `canonicalKeys`). */
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
/** One archive of a build: where it is and its hash (the writer adds `size`, which readers ignore). */
export type ManifestArchive = v.InferOutput<typeof ArchiveRef>;

/** Validates a parsed manifest; `where` names it in the error (one line per problem, with its path). */
export function parseManifest(data: unknown, where: string): ManifestDoc {
  const result = v.safeParse(ManifestSchema, data);
  if (result.success) return result.output;
  const problems = result.issues.slice(0, 5).map((issue) => `${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`);
  throw new UpdateError(`the manifest at ${where} does not have the expected shape: ${problems.join('; ')}`);
}

/**
 * The newest build: greatest `time`; on equal times the entry later in the document wins (as in the real watchdog).
 * Document order is the object's key order, which JSON.parse keeps except for integer-like keys (sorted first);
 * real build keys are timestamps or commit hashes.
 */
export function newestBuild(doc: ManifestDoc): { key: string; build: ManifestBuild } | undefined {
  let best: { key: string; build: ManifestBuild; time: number } | undefined;
  for (const [key, build] of Object.entries(doc.builds)) {
    const time = Date.parse(build.time);
    if (!best || time >= best.time) best = { key, build, time };
  }
  return best && { key: best.key, build: best.build };
}
