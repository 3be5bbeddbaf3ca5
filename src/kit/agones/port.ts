/**
 * `AGONES_SDK_HTTP_PORT`, or undefined when unset or not a port: for the kit and the config checks, which may import
 * this leaf alone of the kit (.dependency-cruiser.cjs).
 */
export function agonesPortFrom(env: Record<string, string | undefined>): number | undefined {
  const raw = env.AGONES_SDK_HTTP_PORT?.trim();
  if (!raw || !/^\d+$/.test(raw)) return undefined;
  const port = Number(raw);
  return port > 0 && port < 65536 ? port : undefined;
}
