import { agonesPortFrom } from '../kit/agones-port.ts';
import { type AgonesConfig, DEFAULT_CRASH_LOOP_LIMIT, DEFAULT_SDK_PORT } from './agones-schema.ts';
import { type ConfigPath, isMap } from './merge.ts';

/**
 * Whether Agones mode is on (`Agones.Enabled: true`, or `AGONES_SDK_HTTP_PORT` set and `Enabled` not false), and the
 * rule it brings: the daemon wraps exactly one instance, since one pod is one GameServer. Reads the raw settings
 * defensively, as checks.ts does (a wrong type is the schema's problem); returns the mode when it is on.
 */
export function checkAgones(
  raw: Record<string, unknown>,
  env: Record<string, string | undefined>,
  problem: (path: ConfigPath, expected: string, found: unknown) => void,
): AgonesConfig | null {
  const agones = isMap(raw.Agones) ? raw.Agones : {};
  const envPort = agonesPortFrom(env);
  const enabled = agones.Enabled === true || (agones.Enabled !== false && envPort !== undefined);
  if (!enabled) return null;
  const servers = raw.Servers;
  const instances = Object.keys(isMap(servers) && isMap(servers.Instances) ? servers.Instances : {});
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
    port: num(agones.Port, envPort ?? DEFAULT_SDK_PORT),
    playersSeconds: num(agones.PlayersSeconds, 5),
    crashLoopLimit: num(agones.CrashLoopLimit, DEFAULT_CRASH_LOOP_LIMIT),
  };
}
