import * as v from 'valibot';
import type { ConfigPath } from './merge.ts';
import { type AnySchema, entriesOf, keyNames, schemaAt, unwrap } from './schema-walk.ts';
import { SECRET_KEYS } from './sections/destinations.ts';
import { closest } from './suggest.ts';

/** `Servers.Instances.alpha.ApiPort`; odd keys quoted (`Servers.Instances."a b"`), list items as `Arguments[1]`. */
export function formatPath(path: ConfigPath): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += (out ? '.' : '') + (/^[A-Za-z0-9_-]+$/.test(part) ? part : JSON.stringify(part));
  }
  return out;
}

/** What was found, for the "got …" half of a problem line. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  return String(value);
}

/** A problem line: `<file>: <key.path>: <expected>, got <found>`. */
export function problemLine(file: string, path: ConfigPath, expected: string, found: unknown): string {
  // A webhook's URL is its password, as is a token or an SMTP URL with one: never shown.
  const secret = typeof found === 'string' && SECRET_KEYS.has(String(path.at(-1)));
  const got = secret ? 'a value not shown here (it holds a token or password)' : describeValue(found);
  return `${file}: ${formatPath(path)}: ${expected}, got ${got}`;
}

/** Default valibot messages read "Invalid type: Expected X but received Y"; keep only the expectation. */
function expectation(issue: v.BaseIssue<unknown>): string {
  if (/^expected /i.test(issue.message)) return issue.message;
  return `expected ${issue.expected ?? 'a valid value'}`;
}

/**
 * Where else in the schema a key of this name is allowed (`DiscordWebhook` at the top level belongs under
 * `Notification`): the paths of named entries, not of map keys a user chooses (instances, routes).
 */
function elsewhere(root: AnySchema, key: string, depth = 3, at: ConfigPath = []): ConfigPath[] {
  const entries = entriesOf(unwrap(root, {}));
  if (!entries || depth === 0) return [];
  const found: ConfigPath[] = keyNames(entries).some((k) => k.toLowerCase() === key.toLowerCase()) ? [at] : [];
  for (const [name, child] of Object.entries(entries)) found.push(...elsewhere(child, key, depth - 1, [...at, name]));
  return found;
}

/** One line per issue, deduplicated, each naming the file that supplied the value. */
export function formatIssues(
  issues: readonly v.BaseIssue<unknown>[],
  root: AnySchema,
  sourceOf: (path: ConfigPath) => string,
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path: ConfigPath = (issue.path ?? []).map((p) => (typeof p.key === 'number' ? p.key : String(p.key)));
    const file = sourceOf(path);
    const last = issue.path?.at(-1);
    if (issue.type === 'strict_object' && issue.expected === 'never' && last?.origin === 'key') {
      // An unknown key: usually a typo, so suggest the nearest allowed one.
      const parent = schemaAt(root, path.slice(0, -1));
      const allowed = keyNames((parent && entriesOf(unwrap(parent, {}))) ?? {});
      const key = String(last.key);
      const guess = closest(key, allowed);
      const home = guess ? [] : elsewhere(root, key).filter((p) => p.length > 0);
      const hint = guess
        ? `did you mean ${guess}?`
        : home.length > 0
          ? `it belongs under ${home.map(formatPath).join(' or ')}`
          : `expected one of ${allowed.join(', ')}`;
      lines.push(`${file}: ${formatPath(path)}: unknown key (${hint})`);
    } else if (issue.type === 'strict_object' && issue.input === undefined && last?.origin === 'key') {
      // A required key is missing: say what its own schema expects.
      const entry = schemaAt(root, path);
      const own = entry ? v.safeParse(entry, undefined) : undefined;
      const first = own && !own.success ? own.issues[0] : undefined;
      lines.push(problemLine(file, path, first ? expectation(first) : 'required', undefined));
    } else {
      lines.push(problemLine(file, path, expectation(issue), issue.input));
    }
  }
  return [...new Set(lines)];
}
