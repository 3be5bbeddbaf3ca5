/**
 * `AGONES_SDK_HTTP_PORT` read one way for the kit and the daemon's config checks. A leaf with no imports, so the
 * config layer may use it (the one kit module it may: see .dependency-cruiser.cjs).
 */

/** The port from `AGONES_SDK_HTTP_PORT`, or undefined when it is unset, empty or not a port number. */
export function agonesPortFrom(env: Record<string, string | undefined>): number | undefined {
  const raw = env.AGONES_SDK_HTTP_PORT?.trim();
  if (!raw || !/^\d+$/.test(raw)) return undefined;
  const port = Number(raw);
  return port > 0 && port < 65536 ? port : undefined;
}
