import * as v from 'valibot';

/*
 * What the SDK server's REST gateway sends: every field, proto names (`object_meta`), int64 as strings, more in later
 * versions (loose schemas). Only what the kit reads must have its type.
 */

export const GAME_SERVER_STATES = [
  'PortAllocation',
  'Creating',
  'Starting',
  'Scheduled',
  'RequestReady',
  'Ready',
  'Reserved',
  'Allocated',
  'Shutdown',
  'Error',
  'Unhealthy',
] as const;
export type GameServerState = (typeof GAME_SERVER_STATES)[number];

const stringMap = v.optional(v.nullable(v.record(v.string(), v.string())));

export const GameServerSchema = v.looseObject({
  object_meta: v.optional(
    v.looseObject({
      name: v.optional(v.string()),
      namespace: v.optional(v.string()),
      labels: stringMap,
      annotations: stringMap,
    }),
  ),
  status: v.optional(
    v.looseObject({
      /** Not the picklist: a newer Agones's new state must not break the watch. */
      state: v.optional(v.string()),
      address: v.optional(v.string()),
      ports: v.optional(
        v.nullable(v.array(v.looseObject({ name: v.optional(v.string()), port: v.optional(v.number()) }))),
      ),
      counters: v.optional(
        v.nullable(
          v.record(v.string(), v.looseObject({ count: v.optional(v.string()), capacity: v.optional(v.string()) })),
        ),
      ),
    }),
  ),
});
export type GameServer = v.InferOutput<typeof GameServerSchema>;

/** A line of `GET /watch/gameserver`: a change, or the gateway's report of a broken stream. */
export const WatchResultSchema = v.looseObject({ result: GameServerSchema });
export const WatchErrorSchema = v.looseObject({
  error: v.looseObject({ message: v.optional(v.string()), code: v.optional(v.number()) }),
});

const int64 = v.pipe(v.string(), v.regex(/^-?\d+$/, 'must be an integer written as a string'));
export const CounterWireSchema = v.looseObject({ name: v.optional(v.string()), count: int64, capacity: int64 });

/** int64 values as numbers: counts beyond 2^53 are no game's player count. */
export interface Counter {
  name: string;
  count: number;
  capacity: number;
}

export interface CounterUpdate {
  count?: number | bigint;
  capacity?: number | bigint;
  countDiff?: number | bigint;
}

export function int64String(value: number | bigint, what: string): string {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new RangeError(`${what} must be a whole number, not ${value}`);
  }
  return String(value);
}

/** Fields left out stay as they are. */
export function counterUpdateBody(update: CounterUpdate): Record<string, string> {
  const body: Record<string, string> = {};
  for (const key of ['count', 'capacity', 'countDiff'] as const) {
    const value = update[key];
    if (value !== undefined) body[key] = int64String(value, key);
  }
  if (Object.keys(body).length === 0) throw new RangeError('a Counter update needs count, capacity or countDiff');
  return body;
}
