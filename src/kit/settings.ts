import { type CvarAssignment, parseArgs, SettingsError } from './settings-args.ts';
import { envCvars, readConfigFile } from './settings-sources.ts';

export { type CvarAssignment, type ParsedArgs, parseArgs, SettingsError, splitAssignment } from './settings-args.ts';
export { envCvars, flattenToml, readConfigFile } from './settings-sources.ts';

/** Where a cvar's current value came from, lowest precedence first. */
export type CvarOrigin = 'default' | 'config' | 'env' | 'argv';
export type CvarDefault = string | number | boolean;

export interface LoadSettingsOptions {
  argv: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Values used when no source sets a cvar (the game's registered defaults). */
  defaults?: Record<string, CvarDefault>;
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/**
 * Engine settings (cvars) after layering. Names are case-sensitive, as in the engine. Typed getters take a
 * default for cvars nobody set and throw a {@link SettingsError} naming the cvar when a value has the wrong type.
 */
export class Settings {
  readonly #values = new Map<string, { value: string; origin: CvarOrigin }>();

  constructor(
    /** `--config-file`, when given (it may not exist yet). */
    readonly configFile: string | undefined,
    /** `--data-dir`, when given: the only place the server writes to. */
    readonly dataDir: string | undefined,
    /** Non-fatal problems found while parsing (unknown arguments), for the game to log. */
    readonly warnings: readonly string[],
  ) {}

  /** Sets a cvar; later calls win. Used while layering, and by games that change cvars at runtime. */
  set(name: string, value: CvarDefault, origin: CvarOrigin = 'argv'): void {
    this.#values.set(name, { value: String(value), origin });
  }

  has(name: string): boolean {
    return this.#values.has(name);
  }

  /** The raw text of a cvar, or undefined when nobody set it. */
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
 * Builds the settings as the engine does, lowest precedence first: defaults, the
 * config file, `ROBUST_CVARS`, `ROBUST_CVAR_*`, then `--cvar` in order (the last one wins).
 * Throws a {@link SettingsError} on a malformed argument or an unreadable config file.
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
  if (args.configFile !== undefined) apply(readConfigFile(args.configFile), 'config');
  apply(envCvars(opts.env ?? {}), 'env');
  apply(args.cvars, 'argv');
  return settings;
}
