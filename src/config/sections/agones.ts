/** `Agones`: the daemon as the wrapper of one engine server in an Agones GameServer pod (docs/agones.md). */
import * as v from 'valibot';
import { agonesPortFrom, DEFAULT_AGONES_HTTP_PORT } from '../../kit/agones/port.ts';
import { isMap, type ReportProblem, rawInstances } from '../merge.ts';
import { amount, Port, seconds as secondsOf } from '../numbers.ts';

/** About 15 s of relaunching at the default back-off. */
const DEFAULT_CRASH_LOOP_LIMIT = 5;

const seconds = (def: number, max: number, why: string) =>
  secondsOf(def, { positive: true, max, tooBig: `expected at most ${max} seconds (${why})` });

export const AgonesSchema = v.strictObject(
  {
    /** Unset: on when `AGONES_SDK_HTTP_PORT` is in the environment (the SDK server's sidecar sets it). */
    Enabled: v.optional(v.boolean('expected true or false')),
    /** Between two `/health` pings; well inside Agones' window (periodSeconds × failureThreshold, 5 × 3 by default). */
    HealthSeconds: seconds(2, 60, 'a health ping further apart gets the GameServer marked Unhealthy'),
    /** The SDK server's REST port; default `AGONES_SDK_HTTP_PORT`, else 9358. */
    Port: v.optional(Port),
    /** Crashes in one loop (no stable run between) after which `/health` stops and Agones replaces the pod. */
    CrashLoopLimit: v.optional(
      amount('crashes', {
        whole: true,
        min: 2,
        tooSmall: 'expected at least 2 (a single crash and relaunch must keep the GameServer Healthy)',
      }),
      DEFAULT_CRASH_LOOP_LIMIT,
    ),
    /** How often the server's player count is read from its `GET /status`, for the `players` label and Counter. */
    PlayersSeconds: seconds(5, 3600, 'the player count would be stale for longer than an hour'),
  },
  'expected a map of Agones settings (Enabled, HealthSeconds, Port, PlayersSeconds, CrashLoopLimit)',
);

export type AgonesConfig = NonNullable<ReturnType<typeof checkAgones>>;

/**
 * Agones mode when it is on (`Enabled: true`, or `AGONES_SDK_HTTP_PORT` set and `Enabled` not false), and its rule:
 * one pod is one GameServer, so exactly one instance. Reads the raw settings defensively, as checks.ts does.
 */
export function checkAgones(
  raw: Record<string, unknown>,
  env: Record<string, string | undefined>,
  problem: ReportProblem,
) {
  const agones = isMap(raw.Agones) ? raw.Agones : {};
  const envPort = agonesPortFrom(env);
  const enabled = agones.Enabled === true || (agones.Enabled !== false && envPort !== undefined);
  if (!enabled) return null;
  const instances = Object.keys(rawInstances(raw));
  if (instances.length !== 1) {
    const why = agones.Enabled === true ? 'Agones.Enabled is true' : 'AGONES_SDK_HTTP_PORT is set';
    problem(
      ['Servers', 'Instances'],
      `expected exactly one instance in Agones mode (${why}; a GameServer pod wraps one server)`,
      instances.length,
    );
  }
  const num = (x: unknown, def: number) => (typeof x === 'number' ? x : def);
  return {
    healthSeconds: num(agones.HealthSeconds, 2),
    port: num(agones.Port, envPort ?? DEFAULT_AGONES_HTTP_PORT),
    playersSeconds: num(agones.PlayersSeconds, 5),
    // `/health` stops once the instance's crash streak reaches this; it resumes after a stable run.
    crashLoopLimit: num(agones.CrashLoopLimit, DEFAULT_CRASH_LOOP_LIMIT),
  };
}
