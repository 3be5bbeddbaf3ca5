import { formatPath } from './issues.ts';
import { type ConfigPath, INDEX, isMap, setOwn } from './merge.ts';
import { type AnySchema, childSchema, entriesOf, KEY_ALIASES, unwrap } from './schema-walk.ts';

const ALIAS_BY_LOWER = new Map(Object.entries(KEY_ALIASES).map(([alias, name]) => [alias.toLowerCase(), name]));

// .NET's configuration matches keys whatever their case and keeps every value text until bound: these two passes
// give our schema the same view, so a real installation's files load unchanged.

/**
 * Renames known keys and aliases to the schema's spelling (`apitoken` → `ApiToken`, `DiscordWebhook` →
 * `ChatWebhook`), so a later layer overrides either; unknown keys stay for validation's "did you mean". Two keys of
 * one map naming the same setting are a problem, as in .NET.
 */
export function canonicalKeys(
  data: Record<string, unknown>,
  root: AnySchema,
  fileName: string,
): { data: Record<string, unknown>; problems: string[] } {
  const problems: string[] = [];
  const walk = (value: unknown, schema: AnySchema | undefined, path: ConfigPath): unknown => {
    if (Array.isArray(value)) {
      const item = schema && childSchema(unwrap(schema, value), 0);
      return value.map((x, i) => walk(x, item, [...path, i]));
    }
    if (!isMap(value) || !schema) return value;
    const s = unwrap(schema, value);
    const entries = entriesOf(s);
    const byLower = new Map(Object.keys(entries ?? {}).map((k) => [k.toLowerCase(), k]));
    const seen = new Map<string, string>();
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const lower = key.toLowerCase();
      const alias = ALIAS_BY_LOWER.get(lower);
      const name = byLower.get(lower) ?? (alias !== undefined && byLower.has(alias.toLowerCase()) ? alias : key);
      const twin = seen.get(name.toLowerCase());
      if (twin !== undefined) {
        problems.push(
          `${fileName}: ${formatPath([...path, key])}: the same setting as ${twin} (keys are case-insensitive, and the real watchdog's names are aliases); keep one`,
        );
        continue;
      }
      seen.set(name.toLowerCase(), key);
      setOwn(out, name, walk(child, childSchema(s, name), [...path, name]));
    }
    return out;
  };
  return { data: walk(data, root, []) as Record<string, unknown>, problems };
}

const NUMBER = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;
const BOOLEAN = /^\s*(true|false)\s*$/i;

/**
 * Binds text as .NET does: a number or boolean written as text becomes one where the schema expects it, a scalar
 * where text is expected its text, a choice matches whatever its case, a map of indices (`Arguments__0`) is a list.
 * What cannot be bound is left for validation to report.
 */
export function bindScalars(value: unknown, schema: AnySchema | undefined): unknown {
  if (!schema) return value;
  const s = unwrap(schema, value);
  if (isMap(value) && s.type === 'array' && Object.keys(value).every((k) => INDEX.test(k))) {
    // In index order, gaps closed, as the .NET binder fills a list.
    const list = Object.keys(value)
      .sort((a, b) => Number(a) - Number(b))
      .map((k) => value[k]);
    return bindScalars(list, schema);
  }
  if (Array.isArray(value)) return value.map((x, i) => bindScalars(x, childSchema(s, i)));
  if (isMap(value)) {
    if (!entriesOf(s) && !('value' in s)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(value)) setOwn(out, k, bindScalars(x, childSchema(s, k)));
    return out;
  }
  if (typeof value === 'string') {
    if (s.type === 'number' && NUMBER.test(value)) return Number(value);
    if (s.type === 'boolean' && BOOLEAN.test(value)) return value.trim().toLowerCase() === 'true';
    if (s.type === 'picklist' && 'options' in s && Array.isArray(s.options)) {
      const hit = s.options.find(
        (o): o is string => typeof o === 'string' && o.toLowerCase() === value.trim().toLowerCase(),
      );
      return hit ?? value;
    }
    return value;
  }
  if ((typeof value === 'number' || typeof value === 'boolean') && s.type === 'string') return String(value);
  return value;
}
