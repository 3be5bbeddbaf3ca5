// The leaf of the kit the config may import (.dependency-cruiser.cjs).

/** Agones' own default REST port of the SDK server. */
export const DEFAULT_AGONES_HTTP_PORT = 9358;

/** `AGONES_SDK_HTTP_PORT`, or undefined when unset or not a port. */
export function agonesPortFrom(env: Record<string, string | undefined>): number | undefined {
  const raw = env.AGONES_SDK_HTTP_PORT?.trim();
  if (!raw || !/^\d+$/.test(raw)) return undefined;
  const port = Number(raw);
  return port > 0 && port < 65536 ? port : undefined;
}
