/**
 * Reads the titles a test file registers, without running it: uvu has no listing mode, and importing a test file
 * would start its daemons and builds. A suite is a name the file runs (`s.run();` alone on a line), an alias
 * chosen by a condition (`const it = why ? s.skip : s;`) or a name a suite helper returns (`const { s, test } =
 * smallDiskSuite(…)`); a title is the string or template literal that opens `s(…)`, `s.skip(…)` or `s.only(…)`.
 * A title held in a variable cannot be read this way and is not listed.
 */
import { readFileSync } from 'node:fs';

export interface Title {
  /** The suite's variable in the file (`test` for uvu's default suite). */
  suite: string;
  /** The title as written; a template's placeholders stay `${…}`. */
  text: string;
  line: number;
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Names the file runs (`test.run();`), and the names it gives them under a condition (`const it = c ? s.skip : s`). */
export function suiteNames(source: string): string[] {
  const names = new Set([...source.matchAll(/^\s*([A-Za-z_$][\w$]*)\.run\(\);?\s*$/gm)].map((m) => m[1] ?? ''));
  const aliases = [
    ...source.matchAll(/^\s*const ([A-Za-z_$][\w$]*) = [^;\n]*\? ([A-Za-z_$][\w$]*)(?:\.skip)? : \2(?:\.skip)?;/gm),
  ];
  for (const [, alias = '', of = ''] of aliases) if (names.has(of)) names.add(alias);
  // A helper that makes the suite and its conditional alias at once: `const { s, test } = smallDiskSuite(…)`.
  for (const [, bound = ''] of source.matchAll(/^\s*const \{([^}]*)\} = \w*[sS]uite\b/gm)) {
    for (const part of bound.split(',')) names.add((part.split(':').pop() ?? '').trim());
  }
  names.delete('');
  return [...names];
}

/** Every test title registered in `source`, in source order. */
export function titlesOf(source: string): Title[] {
  const suites = suiteNames(source);
  if (suites.length === 0) return [];
  const names = suites.map(escapeRegExp).join('|');
  // A literal in quotes or backticks, escapes allowed; a template's `${…}` may not nest another template.
  const call = new RegExp(
    `(?<![\\w$.])(${names})(?:\\.(?:skip|only))?\\(\\s*(['"\`])((?:\\\\[^]|(?!\\2)[^\\\\])*)\\2`,
    'g',
  );
  return [...source.matchAll(call)].map((m) => ({
    suite: m[1] ?? '',
    text: m[3] ?? '',
    line: source.slice(0, m.index).split('\n').length,
  }));
}

/** Every test title registered in the file at `path`. */
export const titlesIn = (path: string): Title[] => titlesOf(readFileSync(path, 'utf8'));
