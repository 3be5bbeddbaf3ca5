import { rename, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as v from 'valibot';
import { MAINTENANCE_POLICIES } from '../config/sections/maintenance.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { readRegularFile } from '../regular-file.ts';
import { writeFileAtomic } from './atomic-file.ts';

/** The watchdog's own per-instance file, in the instance folder. */
export const DATA_FILE = 'data.json';

/**
 * A launch whose process is being spawned: written before the spawn and replaced by `launch` once the pid is
 * known. A daemon killed in between leaves a server no `launch` names; the next daemon finds it by this secret
 * (in the server's environment) and command line, and adopts or shuts it down instead of launching a second one.
 */
const SpawningSchema = v.object({
  program: v.string(),
  args: v.array(v.string()),
  secret: v.string(),
  launchedAt: v.string(),
  /** Process tracking (optional: files written before it existed stay valid). */
  cgroup: v.optional(v.nullable(v.string())),
  marker: v.optional(v.nullable(v.string())),
});

/** A launch once its process runs: the spawning record plus the pid and its start time, which identify it. */
const LaunchSchema = v.object({
  ...SpawningSchema.entries,
  pid: v.pipe(v.number(), v.integer(), v.minValue(1)),
  startTime: v.string(),
});

const Policy = v.picklist(MAINTENANCE_POLICIES);
/** A maintenance plan: the pending restart or update and a hold, so both outlive a daemon restart. */
const MaintenanceDataSchema = v.object({
  pending: v.nullable(
    v.object({
      action: v.picklist(['restart', 'update']),
      source: v.picklist(['schedule', 'update', 'request']),
      when: Policy,
      since: v.number(),
      deadline: v.number(),
      maxDelayMs: v.number(),
      asked: v.boolean(),
      carried: v.boolean(),
      /** Optional: plans written before it existed stay valid. */
      forced: v.optional(v.boolean(), false),
      /** A restore's restart: the backup it puts back. */
      restore: v.optional(v.string()),
      /** Who asked for it (a request). */
      by: v.optional(v.string()),
    }),
  ),
  hold: v.nullable(v.object({ since: v.number(), until: v.number(), reason: v.string() })),
});

const StopSchema = v.object({ by: v.string(), at: v.string() });

const InstanceDataSchema = v.object({
  version: v.literal(1),
  updateType: v.nullable(v.string()),
  revision: v.nullable(v.string()),
  /** The revision in `bin.prev`, for rollback. Optional: files written before it existed stay valid. */
  previousRevision: v.optional(v.nullable(v.string()), null),
  launch: v.nullable(LaunchSchema),
  /** Optional: files written before it existed stay valid, and most of the time there is none. */
  spawning: v.optional(v.nullable(SpawningSchema)),
  /** Optional: absent when nothing was ever pending or held. */
  maintenance: v.optional(v.nullable(MaintenanceDataSchema)),
  /**
   * An operator's stop (who, when): the instance stays stopped across daemon restarts until a restart or rollback.
   * Optional: files written before it existed stay valid.
   */
  stopped: v.optional(v.nullable(StopSchema), null),
});

/** What reattaching needs of the last launch: pid, process start time, program, args and the current secret. */
export type LaunchData = v.InferOutput<typeof LaunchSchema>;
/** The maintenance plan kept for the next daemon (see MaintenanceDataSchema). */
export type MaintenanceData = v.InferOutput<typeof MaintenanceDataSchema>;
/** An operator's stop, kept for the next daemon (see InstanceDataSchema.stopped). */
export type StopData = v.InferOutput<typeof StopSchema>;
/** A launch being spawned (see SpawningSchema). */
export type SpawningData = v.InferOutput<typeof SpawningSchema>;
/** The watchdog's own data for one instance. Holds a secret: written with mode 0600. */
export type InstanceData = v.InferOutput<typeof InstanceDataSchema>;

export function defaultInstanceData(updateType: string | null): InstanceData {
  return { version: 1, updateType, revision: null, previousRevision: null, launch: null, stopped: null };
}

/**
 * Reads `<dir>/data.json`. Missing: defaults. Written by an older real watchdog (`CurrentRevision` only): that
 * revision, for the current `UpdateType` (the old file does not say which). Corrupt, truncated or the wrong shape: set aside as
 * `data.json.corrupt-<timestamp>` with a warning, defaults returned. Stored for a different `UpdateType`: the
 * revision is reset (a revision from one provider means nothing to another). Never throws.
 */
export async function readInstanceData(dir: string, updateType: string | null, log: Logger): Promise<InstanceData> {
  const file = join(dir, DATA_FILE);
  let text: string;
  try {
    // The server can write its folder: a named pipe there is refused, never waited on.
    text = await readRegularFile(file, 'utf8');
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
    if (code !== 'ENOENT')
      log.warn('could not read data.json; starting without a known revision', { file, error: describeError(err) });
    return defaultInstanceData(updateType);
  }

  let parsed: unknown;
  let why: string | undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not the parser's message: Node quotes the offending text, which may hold the secret.
    why = 'not valid JSON (truncated or damaged)';
  }
  const legacy = why === undefined ? legacyRevision(parsed) : undefined;
  if (legacy !== undefined) {
    log.info('data.json was written by the real watchdog; taking its revision', { file, revision: legacy });
    return { ...defaultInstanceData(updateType), revision: legacy };
  }
  const checked = why === undefined ? v.safeParse(InstanceDataSchema, parsed) : undefined;
  if (!checked?.success) {
    why ??= `unexpected content at ${checked?.issues.map((i) => v.getDotPath(i) ?? '(root)').join(', ')}`;
    try {
      const aside = await freeName(`${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      await rename(file, aside);
      log.warn('data.json was corrupt; set it aside and starting without a known revision', {
        file,
        aside,
        reason: why,
      });
    } catch (err) {
      log.warn('data.json was corrupt and could not be set aside; it will be overwritten', {
        file,
        reason: why,
        error: describeError(err),
      });
    }
    return defaultInstanceData(updateType);
  }

  const data = checked.output;
  if (data.updateType !== updateType) {
    log.info('UpdateType changed; forgetting the revision so the new provider installs its own build', {
      was: data.updateType,
      now: updateType,
      revision: data.revision,
    });
    return { ...data, updateType, revision: null, previousRevision: null };
  }
  return data;
}

/**
 * The revision of a data.json written by an older real watchdog (`{"CurrentRevision": "…"}`, names matched
 * case-insensitively as its JSON reader does), or undefined when `parsed` is not one. Ours always has `version`.
 */
function legacyRevision(parsed: unknown): string | null | undefined {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || 'version' in parsed) return undefined;
  const entry = Object.entries(parsed).find(([name]) => name.toLowerCase() === 'currentrevision');
  if (!entry) return undefined;
  const value: unknown = entry[1];
  return typeof value === 'string' || value === null ? value : undefined;
}

/**
 * What `<dir>/data.json` is, without reading it into use: `missing`, `legacy` (the real watchdog's, revision only)
 * or `ours` (anything else, corrupt included: readInstanceData deals with that). An import from the real
 * watchdog's data.db only goes where there is none of ours.
 */
export async function instanceDataKind(dir: string): Promise<'missing' | 'legacy' | 'ours'> {
  let text: string;
  try {
    text = await readRegularFile(join(dir, DATA_FILE), 'utf8');
  } catch (err) {
    const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
    return code === 'ENOENT' ? 'missing' : 'ours';
  }
  try {
    return legacyRevision(JSON.parse(text)) === undefined ? 'ours' : 'legacy';
  } catch {
    return 'ours';
  }
}

/**
 * `name`, or `name-2`, `name-3`, … when taken: a second corrupt file set aside within the same millisecond must not
 * replace the first (rename overwrites), or the copy kept for a person to look at is lost.
 */
async function freeName(name: string): Promise<string> {
  for (let n = 1; n < 1000; n++) {
    const candidate = n === 1 ? name : `${name}-${n}`;
    if (!(await stat(candidate).catch(() => null))) return candidate;
  }
  throw new Error(`could not find a free name beside ${name}`);
}

/** Pending writes per folder, so writes land in the order they were made. */
const queues = new Map<string, Promise<void>>();

/**
 * Writes `<dir>/data.json` atomically: a temporary file in the same folder (mode 0600), fsync, rename over the
 * old one, fsync the folder. Concurrent calls for one folder are serialised, so the last call always wins.
 * `durable: false` leaves out both fsyncs: still atomic, and still there after the daemon is killed (the kernel
 * holds the write), but not through a power loss; for a note that a power loss makes moot.
 */
export function writeInstanceData(dir: string, data: InstanceData, opts: { durable?: boolean } = {}): Promise<void> {
  const key = resolve(dir);
  const durable = opts.durable ?? true;
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => writeNow(key, data, durable));
  queues.set(key, next);
  const forget = () => {
    if (queues.get(key) === next) queues.delete(key);
  };
  next.then(forget, forget);
  return next;
}

async function writeNow(dir: string, data: InstanceData, durable: boolean): Promise<void> {
  const file = join(dir, DATA_FILE);
  try {
    await writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`, { durable });
  } catch (err) {
    throw new Error(`could not write ${file} (${describeError(err)}); check that the instance folder is writable`, {
      cause: err,
    });
  }
}
