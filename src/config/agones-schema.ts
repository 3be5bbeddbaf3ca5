/** `Agones`: the daemon as the wrapper of one engine server in an Agones GameServer pod (docs/agones.md). */
import * as v from 'valibot';

/** Agones' own default REST port of the SDK server, used when neither `Agones.Port` nor the variable says. */
export const DEFAULT_SDK_PORT = 9358;

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
    Port: v.optional(
      v.pipe(
        v.number('expected an integer 1-65535'),
        v.integer('expected an integer 1-65535'),
        v.minValue(1, 'expected an integer 1-65535'),
        v.maxValue(65535, 'expected an integer 1-65535'),
      ),
    ),
    /** How often the server's player count is read from its `GET /status`, for the `players` label and Counter. */
    PlayersSeconds: seconds(5, 3600, 'the player count would be stale for longer than an hour'),
  },
  'expected a map of Agones settings (Enabled, HealthSeconds, Port, PlayersSeconds)',
);
export type AgonesSettings = v.InferOutput<typeof AgonesSchema>;

/** Agones mode as the daemon runs it. */
export interface AgonesConfig {
  healthSeconds: number;
  port: number;
  playersSeconds: number;
}
