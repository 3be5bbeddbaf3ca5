import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type CvarAssignment, SettingsError, splitAssignment } from './settings-args.ts';

/**
 * Cvars from the environment, as the engine's `EnvironmentVariables.cs` reads them: `ROBUST_CVARS` (`k=v;k=v`) first,
 * then every `ROBUST_CVAR_<name>` with each `__` turned into `.`, case preserved (`ROBUST_CVAR_watchdog__baseUrl` →
 * `watchdog.baseUrl`). Later entries win, so `ROBUST_CVAR_*` beats `ROBUST_CVARS`.
 */
export function envCvars(env: NodeJS.ProcessEnv): CvarAssignment[] {
  const out: CvarAssignment[] = [];
  for (const entry of (env.ROBUST_CVARS ?? '').split(';')) {
    if (entry.trim() === '') continue;
    out.push(splitAssignment(entry, 'ROBUST_CVARS'));
  }
  const PREFIX = 'ROBUST_CVAR_';
  for (const [key, value] of Object.entries(env)) {
    if (!key.startsWith(PREFIX) || value === undefined) continue;
    const name = key.slice(PREFIX.length).replaceAll('__', '.');
    if (name !== '') out.push([name, value]);
  }
  return out;
}

/**
 * Flattens a TOML document into cvars: tables are prefixes (`[game] hostname = "x"` → `game.hostname`).
 * Scalars become their text; arrays (e.g. `links = [{ name = "Wiki", url = "…" }]`) become JSON text,
 * which the game parses where it expects a list.
 */
export function flattenToml(doc: Record<string, unknown>, prefix = ''): CvarAssignment[] {
  const out: CvarAssignment[] = [];
  for (const [key, value] of Object.entries(doc)) {
    const name = prefix === '' ? key : `${prefix}.${key}`;
    if (value instanceof Date)
      out.push([name, value.toISOString()]); // smol-toml's TomlDate is a Date
    else if (Array.isArray(value)) out.push([name, JSON.stringify(value)]);
    else if (value !== null && typeof value === 'object')
      out.push(...flattenToml(value as Record<string, unknown>, name));
    else out.push([name, String(value)]);
  }
  return out;
}

/**
 * Reads the config file when it exists. A missing file is normal (the engine only remembers the path as
 * its save target); a file that cannot be parsed is an error naming the file, line and column.
 */
export function readConfigFile(path: string): CvarAssignment[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new SettingsError(`cannot read config file ${path}: ${(err as Error).message}`, { cause: err });
  }
  // Loaded only when there is a file to parse: game servers start without one more often than not.
  const { parse, TomlError } = createRequire(import.meta.url)('smol-toml') as typeof import('smol-toml');
  try {
    return flattenToml(parse(text));
  } catch (err) {
    const where = err instanceof TomlError ? `:${err.line}:${err.column}` : '';
    const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new SettingsError(`config file ${path}${where} is not valid TOML: ${detail}; fix or remove it`, {
      cause: err,
    });
  }
}
