/** `Agones`: the daemon as the wrapper of one engine server in an Agones GameServer pod (docs/agones.md). */
import * as v from 'valibot';
import { Port } from './port-schema.ts';

/** Agones' own default REST port of the SDK server, used when neither `Agones.Port` nor the variable says. */
export const DEFAULT_SDK_PORT = 9358;

/** Crashes in one loop before the GameServer is let go Unhealthy: about 15 s of relaunching at the default back-off. */
export const DEFAULT_CRASH_LOOP_LIMIT = 5;

const seconds = (def: number, max: number, why: string) =>
  v.optional(
    v.pipe(
      v.number('expected a number of seconds'),
      v.gtValue(0, 'expected a positive number of seconds'),
      v.maxValue(max, `expected at most ${max} seconds (${why})`),
    ),
    def,
  );

export const AgonesSchema = v.strictObject(
  {
    /** Unset: on when `AGONES_SDK_HTTP_PORT` is in the environment (the SDK server's sidecar sets it). */
    Enabled: v.optional(v.boolean('expected true or false')),
    /** Between two `/health` pings; well inside Agones' window (periodSeconds × failureThreshold, 5 × 3 by default). */
    HealthSeconds: seconds(2, 60, 'a health ping further apart gets the GameServer marked Unhealthy'),
    /** The SDK server's REST port; default `AGONES_SDK_HTTP_PORT`, else 9358. */
    Port: v.optional(Port),
    /**
     * Crashes in one loop (after check-ins, no stable run between them) after which `/health` stops, so Agones marks
     * the GameServer Unhealthy and replaces the pod; at least 2, so one crash and relaunch never does.
     */
    CrashLoopLimit: v.optional(
      v.pipe(
        v.number('expected a whole number of crashes'),
        v.integer('expected a whole number of crashes'),
        v.minValue(2, 'expected at least 2 (a single crash and relaunch must keep the GameServer Healthy)'),
      ),
      DEFAULT_CRASH_LOOP_LIMIT,
    ),
    /** How often the server's player count is read from its `GET /status`, for the `players` label and Counter. */
    PlayersSeconds: seconds(5, 3600, 'the player count would be stale for longer than an hour'),
  },
  'expected a map of Agones settings (Enabled, HealthSeconds, Port, PlayersSeconds, CrashLoopLimit)',
);

/** Agones mode as the daemon runs it. */
export interface AgonesConfig {
  healthSeconds: number;
  port: number;
  playersSeconds: number;
  /** `/health` stops once the instance's crash streak reaches this; it resumes if the streak ends (a stable run). */
  crashLoopLimit: number;
}
