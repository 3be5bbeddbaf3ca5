/** Sets `key` as an own property whatever it is: `out.__proto__ = value` would replace the prototype instead. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A key path into the configuration: object keys and list indices. */
export type ConfigPath = readonly (string | number)[];

/** Where a cross-field check reports a problem: the key path, what was expected there, and what was found. */
export type ReportProblem = (path: ConfigPath, expected: string, found: unknown) => void;

/** A list index as a key (`Arguments__0` from the environment). */
export const INDEX = /^(0|[1-9]\d*)$/;

export function isMap(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** `Servers.Instances` of raw (merged, unvalidated) settings, or none when it is not a map. */
export function rawInstances(raw: Record<string, unknown>): Record<string, unknown> {
  const servers = raw.Servers;
  return isMap(servers) && isMap(servers.Instances) ? servers.Instances : {};
}

const isInstancesMap = (path: ConfigPath) => path.length === 2 && path[0] === 'Servers' && path[1] === 'Instances';

/**
 * An empty YAML value (`Key:` with nothing after it) means "not set", as in the real watchdog's configuration
 * binder, so it neither sets nor overrides anything. An instance written with no settings still counts as an
 * instance, so validation can say what it lacks.
 */
function dropEmpty(value: unknown, path: ConfigPath): unknown {
  if (!isMap(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === undefined) {
      if (isInstancesMap(path)) setOwn(out, k, {});
      continue;
    }
    setOwn(out, k, dropEmpty(v, [...path, k]));
  }
  return out;
}

/** Deep merge, later layers winning: maps merge key by key; lists and scalars replace. Records who supplied what. */
export function mergeLayers(layers: readonly { name: string; data: Record<string, unknown> }[]) {
  const source = new Map<string, string>();
  const id = (path: ConfigPath) => JSON.stringify(path);

  const merge = (into: Record<string, unknown>, from: Record<string, unknown>, path: ConfigPath, name: string) => {
    for (const [key, v] of Object.entries(from)) {
      // Keys are case-insensitive across layers too (an instance `main` set again as `MAIN` from the environment).
      const k = Object.hasOwn(into, key)
        ? key
        : (Object.keys(into).find((x) => x.toLowerCase() === key.toLowerCase()) ?? key);
      const p = [...path, k];
      // Own keys only: `into.__proto__` or `into.constructor` would otherwise read what every object inherits.
      const existing = Object.hasOwn(into, k) ? into[k] : undefined;
      if (isMap(v) && isMap(existing)) {
        merge(existing, v, p, name);
        continue;
      }
      if (Array.isArray(existing) && isMap(v) && Object.keys(v).every((i) => INDEX.test(i))) {
        // `Arguments__1=x` from the environment replaces one item of a list a file set, as in .NET; a map item
        // (`Notification__Routes__0__Webhook=…`) has the keys set merged into it, so each may come from its own variable.
        const list = [...existing];
        for (const [i, item] of Object.entries(v)) {
          const old: unknown = list[Number(i)];
          list[Number(i)] =
            isMap(item) && isMap(old) ? merge(structuredClone(old), item, [...p, Number(i)], name) : item;
        }
        setOwn(
          into,
          k,
          list.filter((x) => x !== undefined),
        );
        source.set(id(p), name);
        continue;
      }
      setOwn(into, k, isMap(v) ? merge({}, v, p, name) : v);
      // A map keeps the name of the file that introduced it; a leaf or list, the last file that set it.
      source.set(id(p), name);
    }
    return into;
  };

  const value: Record<string, unknown> = {};
  for (const layer of layers) merge(value, dropEmpty(layer.data, []) as Record<string, unknown>, [], layer.name);

  const fallback = layers[0]?.name ?? 'appsettings.yml';
  return {
    value,
    /** The file that supplied the value at `path` (or its nearest supplied ancestor); the first file otherwise. */
    sourceOf(path: ConfigPath): string {
      for (let n = path.length; n > 0; n -= 1) {
        const hit = source.get(id(path.slice(0, n)));
        if (hit) return hit;
      }
      return fallback;
    },
  };
}
