import { rename, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import * as v from 'valibot';
import { MAINTENANCE_POLICIES } from '../../machines/instance.types.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { readRegularFile } from '../regular-file.ts';
import { writeFileAtomic } from './atomic-file.ts';

export const DATA_FILE = 'data.json';

/**
 * Written before a spawn, replaced by `launch` once the pid is known: a daemon killed in between leaves a server the
 * next one finds by this secret (in its environment) and command line, rather than launching a second.
 */
const SpawningSchema = v.object({
  program: v.string(),
  args: v.array(v.string()),
  secret: v.string(),
  launchedAt: v.string(),
  // Optional fields: files written before they existed stay valid.
  cgroup: v.optional(v.nullable(v.string())),
  marker: v.optional(v.nullable(v.string())),
});

/** The pid and its start time identify the process. */
const LaunchSchema = v.object({
  ...SpawningSchema.entries,
  pid: v.pipe(v.number(), v.integer(), v.minValue(1)),
  startTime: v.string(),
});

const Policy = v.picklist(MAINTENANCE_POLICIES);
/** The pending restart or update and a hold, which outlive a daemon restart. */
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
      forced: v.optional(v.boolean(), false),
      /** The backup a restore's restart puts back. */
      restore: v.optional(v.string()),
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
  /** The revision in `bin.prev`, for rollback. */
  previousRevision: v.optional(v.nullable(v.string()), null),
  launch: v.nullable(LaunchSchema),
  spawning: v.optional(v.nullable(SpawningSchema)),
  maintenance: v.optional(v.nullable(MaintenanceDataSchema)),
  /** An operator's stop, kept across daemon restarts until a restart, rollback or restore. */
  stopped: v.optional(v.nullable(StopSchema), null),
});

export type LaunchData = v.InferOutput<typeof LaunchSchema>;
export type MaintenanceData = v.InferOutput<typeof MaintenanceDataSchema>;
export type StopData = v.InferOutput<typeof StopSchema>;
export type SpawningData = v.InferOutput<typeof SpawningSchema>;
/** Holds a secret: written with mode 0600. */
export type InstanceData = v.InferOutput<typeof InstanceDataSchema>;

export function defaultInstanceData(updateType: string | null): InstanceData {
  return { version: 1, updateType, revision: null, previousRevision: null, launch: null, stopped: null };
}

/**
 * Reads `<dir>/data.json`, never throwing: missing, the defaults; the real watchdog's (`CurrentRevision`), that
 * revision; corrupt or the wrong shape, set aside as `data.json.corrupt-<time>` and the defaults; stored for another
 * `UpdateType`, without its revision (it means nothing to another provider).
 */
export async function readInstanceData(dir: string, updateType: string | null, log: Logger): Promise<InstanceData> {
  const file = join(dir, DATA_FILE);
  // The server can write its folder: a named pipe there is refused, never waited on.
  const text = await readRegularFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT')
      log.warn('could not read data.json; starting without a known revision', { file, error: describeError(err) });
    return null;
  });
  if (text === null) return defaultInstanceData(updateType);

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

/** The revision of the real watchdog's `{"CurrentRevision": …}` (any case, as it reads it), or undefined. */
function legacyRevision(parsed: unknown): string | null | undefined {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || 'version' in parsed) return undefined;
  const entry = Object.entries(parsed).find(([name]) => name.toLowerCase() === 'currentrevision');
  if (!entry) return undefined;
  const value: unknown = entry[1];
  return typeof value === 'string' || value === null ? value : undefined;
}

/** `ours` is anything but missing or the real watchdog's (corrupt too): a data.db import goes only elsewhere. */
export async function instanceDataKind(dir: string): Promise<'missing' | 'legacy' | 'ours'> {
  let text: string;
  try {
    text = await readRegularFile(join(dir, DATA_FILE), 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'ours';
  }
  try {
    return legacyRevision(JSON.parse(text)) === undefined ? 'ours' : 'legacy';
  } catch {
    return 'ours';
  }
}

/** `name`, or `name-2`, … when taken: a second corrupt file in the same millisecond must not replace the first. */
async function freeName(name: string): Promise<string> {
  for (let n = 1; n < 1000; n++) {
    const candidate = n === 1 ? name : `${name}-${n}`;
    if (!(await stat(candidate).catch(() => null))) return candidate;
  }
  throw new Error(`could not find a free name beside ${name}`);
}

const queues = new Map<string, Promise<void>>();

/**
 * Writes `<dir>/data.json` atomically, calls for one folder in order. `durable: false` survives the daemon being
 * killed but not a power loss: for a note a power loss makes moot.
 */
export function writeInstanceData(dir: string, data: InstanceData, opts: { durable?: boolean } = {}): Promise<void> {
  const key = resolve(dir);
  const file = join(key, DATA_FILE);
  const write = () =>
    writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`, { durable: opts.durable ?? true }).catch((err) => {
      throw new Error(`could not write ${file} (${describeError(err)}); check that the instance folder is writable`, {
        cause: err,
      });
    });
  const next = (queues.get(key) ?? Promise.resolve()).catch(() => undefined).then(write);
  queues.set(key, next);
  const forget = () => {
    if (queues.get(key) === next) queues.delete(key);
  };
  next.then(forget, forget);
  return next;
}
