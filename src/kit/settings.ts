import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** A command line or environment entry the kit cannot use; the message says which and how to fix it. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}

export type CvarAssignment = readonly [name: string, value: string];

interface ParsedArgs {
  cvars: CvarAssignment[];
  configFile: string | undefined;
  dataDir: string | undefined;
  warnings: string[];
}

/** Engine arguments the kit ignores, their value consumed with them. */
const IGNORED_WITH_VALUE = new Set(['--loglevel', '--mount-zip', '--mount-dir']);

function splitAssignment(text: string, where: string): CvarAssignment {
  const eq = text.indexOf('=');
  if (eq < 0) throw new SettingsError(`${where}: expected name=value but got "${text}" (no "=")`);
  const name = text.slice(0, eq).trim();
  if (name === '') throw new SettingsError(`${where}: expected name=value but got "${text}" (empty name)`);
  return [name, text.slice(eq + 1)];
}

/**
 * The engine's command line as its `CommandLineArgs.cs` parses it: `--cvar name=value` (split at the first `=`),
 * `--config-file PATH`, `--data-dir PATH`; anything else only warns, as there.
 */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const out: ParsedArgs = { cvars: [], configFile: undefined, dataDir: undefined, warnings: [] };
  const valueAfter = (i: number, flag: string): string => {
    const value = argv[i + 1];
    if (value === undefined)
      throw new SettingsError(
        `${flag} needs a value (e.g. ${flag === '--cvar' ? '--cvar net.port=1212' : `${flag} PATH`})`,
      );
    return value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--cvar') out.cvars.push(splitAssignment(valueAfter(i++, arg), '--cvar'));
    else if (arg === '--config-file') out.configFile = valueAfter(i++, arg);
    else if (arg === '--data-dir') out.dataDir = valueAfter(i++, arg);
    else if (IGNORED_WITH_VALUE.has(arg))
      out.warnings.push(`${arg} ${argv[++i] ?? ''} is not supported by this server and was ignored`.trimEnd());
    else out.warnings.push(`Unknown argument: ${arg}`);
  }
  return out;
}

/**
 * Cvars from the environment as the engine's `EnvironmentVariables.cs` reads them: `ROBUST_CVARS` (`k=v;k=v`), then
 * each `ROBUST_CVAR_<name>`, `__` as `.` (`ROBUST_CVAR_watchdog__baseUrl` → `watchdog.baseUrl`), which wins.
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

/** Tables are prefixes (`[game] hostname` → `game.hostname`); arrays become JSON text, for the game to parse. */
function flattenToml(doc: Record<string, unknown>, prefix = ''): CvarAssignment[] {
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

/** A missing config file (null) is normal: the engine only remembers the path as its save target. */
function readConfigFile(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SettingsError(`cannot read config file ${path}: ${(err as Error).message}`, { cause: err });
  }
}

function parseConfigText(text: string, path: string): CvarAssignment[] {
  // Loaded only when there is a file: game servers start without one more often than not.
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

/** Where a cvar's current value came from, lowest precedence first. */
export type CvarOrigin = 'default' | 'config' | 'env' | 'argv';
export type CvarDefault = string | number | boolean;

export interface LoadSettingsOptions {
  argv: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** The game's registered defaults. */
  defaults?: Record<string, CvarDefault>;
  /** The config file's text when the caller read it already (null: there is none). */
  configText?: string | null;
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/**
 * Engine settings (cvars), names case-sensitive. Typed getters take a default for cvars nobody set and throw a
 * {@link SettingsError} naming the cvar when a value has the wrong type.
 */
export class Settings {
  readonly #values = new Map<string, { value: string; origin: CvarOrigin }>();

  constructor(
    /** `--config-file`, which may not exist yet. */
    readonly configFile: string | undefined,
    /** `--data-dir`: the only place the server writes to. */
    readonly dataDir: string | undefined,
    /** Unknown arguments, for the game to log. */
    readonly warnings: readonly string[],
  ) {}

  set(name: string, value: CvarDefault, origin: CvarOrigin = 'argv'): void {
    this.#values.set(name, { value: String(value), origin });
  }

  has(name: string): boolean {
    return this.#values.has(name);
  }

  raw(name: string): string | undefined {
    return this.#values.get(name)?.value;
  }

  origin(name: string): CvarOrigin | undefined {
    return this.#values.get(name)?.origin;
  }

  names(): string[] {
    return [...this.#values.keys()].sort();
  }

  string(name: string, fallback = ''): string {
    return this.raw(name) ?? fallback;
  }

  int(name: string, fallback: number): number {
    const raw = this.raw(name)?.trim();
    if (raw === undefined) return fallback;
    if (!/^[+-]?\d+$/.test(raw)) throw this.#typeError(name, raw, 'an integer');
    return Number.parseInt(raw, 10);
  }

  float(name: string, fallback: number): number {
    const raw = this.raw(name)?.trim();
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (raw === '' || !Number.isFinite(n)) throw this.#typeError(name, raw, 'a number');
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.raw(name)?.trim().toLowerCase();
    if (raw === undefined) return fallback;
    if (TRUE.has(raw)) return true;
    if (FALSE.has(raw)) return false;
    throw this.#typeError(name, raw, 'true or false');
  }

  #typeError(name: string, raw: string, expected: string): SettingsError {
    return new SettingsError(`cvar ${name} must be ${expected} but is "${raw}" (set by ${this.origin(name)})`);
  }
}

/**
 * The settings as the engine layers them: defaults, the config file, `ROBUST_CVARS`, `ROBUST_CVAR_*`, then `--cvar`
 * in order. Throws a {@link SettingsError} on a malformed argument or an unreadable config file.
 *
 * @example
 * const settings = loadSettings({ argv: process.argv.slice(2), env: process.env });
 * const port = settings.int('net.port', 1212);
 */
export function loadSettings(opts: LoadSettingsOptions): Settings {
  const args = parseArgs(opts.argv);
  const settings = new Settings(args.configFile, args.dataDir, args.warnings);
  const apply = (list: CvarAssignment[], origin: CvarOrigin) => {
    for (const [name, value] of list) settings.set(name, value, origin);
  };
  for (const [name, value] of Object.entries(opts.defaults ?? {})) settings.set(name, value, 'default');
  const { configFile } = args;
  const text =
    configFile === undefined ? null : opts.configText === undefined ? readConfigFile(configFile) : opts.configText;
  if (configFile !== undefined && text !== null) apply(parseConfigText(text, configFile), 'config');
  apply(envCvars(opts.env ?? {}), 'env');
  apply(args.cvars, 'argv');
  return settings;
}
