import type * as v from 'valibot';
import { type ConfigPath, isMap } from './merge.ts';

/** Any valibot schema, as the configuration walkers see it. */
export type AnySchema = v.GenericSchema;

export function isSchema(x: unknown): x is AnySchema {
  return typeof x === 'object' && x !== null && 'kind' in x && x.kind === 'schema';
}

const isStructural = (s: AnySchema) => 'entries' in s || 'value' in s || 'item' in s;

/**
 * The schema that decides the shape of a value: optional wrappers and pipes removed (a record piped after a map
 * check gives the record). For a union, the member that fits `value`: a map-shaped member for a map, else the
 * first scalar member.
 */
export function unwrap(s: AnySchema, value?: unknown): AnySchema {
  if ('wrapped' in s && isSchema(s.wrapped)) return unwrap(s.wrapped, value);
  if ('options' in s && Array.isArray(s.options) && s.type === 'union') {
    const pick = s.options.filter(isSchema).find((m) => isMap(value) === isStructural(unwrap(m)));
    return pick ? unwrap(pick, value) : s;
  }
  if ('pipe' in s && Array.isArray(s.pipe)) {
    const structural = [...s.pipe].reverse().find((p): p is AnySchema => isSchema(p) && isStructural(p));
    if (structural && structural !== s) return unwrap(structural, value);
  }
  return s;
}

/** The named entries of an object schema, or undefined for any other schema. */
export function entriesOf(s: AnySchema): Record<string, AnySchema> | undefined {
  if (!('entries' in s) || typeof s.entries !== 'object' || s.entries === null) return undefined;
  const out: Record<string, AnySchema> = {};
  for (const [k, e] of Object.entries(s.entries)) if (isSchema(e)) out[k] = e;
  return out;
}

/** The real watchdog's names for settings this one spells otherwise: the same setting, whichever is written. */
export const KEY_ALIASES: Record<string, string> = { DiscordWebhook: 'ChatWebhook' };

/** Names a key may be written as in an object whose schema has `entries`: its own, and aliases of them. */
export function keyNames(entries: Record<string, unknown>): string[] {
  return [
    ...Object.keys(entries),
    ...Object.keys(KEY_ALIASES).filter((alias) => (KEY_ALIASES[alias] ?? '') in entries),
  ];
}

/** The schema of one child: an object's entry, a record's value or a list's item. */
export function childSchema(s: AnySchema, key: string | number): AnySchema | undefined {
  const entries = entriesOf(s);
  if (entries) return typeof key === 'string' ? entries[key] : undefined;
  if ('value' in s && isSchema(s.value)) return s.value;
  if ('item' in s && isSchema(s.item)) return s.item;
  return undefined;
}

/** The schema that validates `path` below `root`, stepping through optional, pipe, object, record and array. */
export function schemaAt(root: AnySchema, path: ConfigPath): AnySchema | undefined {
  let s: AnySchema | undefined = root;
  for (const key of path) {
    if (!s) return undefined;
    s = childSchema(unwrap(s, {}), key);
  }
  return s;
}
