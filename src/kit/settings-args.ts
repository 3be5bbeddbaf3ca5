/**
 * The engine's command line, as its `CommandLineArgs.cs` parses it: `--cvar name=value` (split at the first `=`,
 * so the value may contain `=`), `--config-file PATH`, `--data-dir PATH`. Unknown arguments only warn, as the engine's
 * "Unknown argument: X"; a malformed `--cvar` or a missing value is an error the operator must fix.
 */

/** A command line or environment entry the kit cannot use; the message says which and how to fix it. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** One `name=value` assignment, in the order it was given. */
export type CvarAssignment = readonly [name: string, value: string];

export interface ParsedArgs {
  cvars: CvarAssignment[];
  configFile: string | undefined;
  dataDir: string | undefined;
  warnings: string[];
}

/** Engine arguments this kit does not implement; their value is consumed so it is not reported twice. */
const IGNORED_WITH_VALUE = new Set(['--loglevel', '--mount-zip', '--mount-dir']);

/** Splits `name=value` at the first `=`; `where` names the source for the error message. */
export function splitAssignment(text: string, where: string): CvarAssignment {
  const eq = text.indexOf('=');
  if (eq < 0) throw new SettingsError(`${where}: expected name=value but got "${text}" (no "=")`);
  const name = text.slice(0, eq).trim();
  if (name === '') throw new SettingsError(`${where}: expected name=value but got "${text}" (empty name)`);
  return [name, text.slice(eq + 1)];
}

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
    if (arg === '--cvar') {
      out.cvars.push(splitAssignment(valueAfter(i, arg), '--cvar'));
      i++;
    } else if (arg === '--config-file') {
      out.configFile = valueAfter(i, arg);
      i++;
    } else if (arg === '--data-dir') {
      out.dataDir = valueAfter(i, arg);
      i++;
    } else if (IGNORED_WITH_VALUE.has(arg)) {
      out.warnings.push(`${arg} ${argv[i + 1] ?? ''} is not supported by this server and was ignored`.trimEnd());
      i++;
    } else {
      out.warnings.push(`Unknown argument: ${arg}`);
    }
  }
  return out;
}
