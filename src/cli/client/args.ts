import { parseArgs } from 'node:util';
import { didYouMean } from '../../config/suggest.ts';
import { UsageError } from '../../errors.ts';
import type { CommandOptions as Options } from '../registry.ts';

/** `parseArgs` in strict mode, its errors (and more than `most` arguments) a `UsageError` with the usage (exit 2). */
export function parseCommandArgs<O extends Options>(args: string[], options: O, usage: string, most?: number) {
  try {
    const parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
    const extra = most === undefined ? undefined : parsed.positionals[most];
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"\n${usage}`);
    return parsed;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(`${parseProblem(code, (err as Error).message, options)}\n${usage}`, { cause: err });
    }
    throw err;
  }
}

/** parseArgs's message in the CLI's words: its unknown-option advice, `-- "--bogus"`, never fits a typo. */
function parseProblem(code: string, message: string, options: Options): string {
  const option = /'(-[^']*)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) {
    const known = Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
    return `unknown option ${option}${didYouMean(option.replace(/=.*/, ''), known)}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) {
    const name = option.split(' ')[0];
    if (/does not take/.test(message)) return `${name} takes no value`;
    if (/argument missing/.test(message)) return `${name} needs a value`;
  }
  return message;
}

/** A positive number option (`--interval 0.5`); undefined when the option was not given. */
export function positiveNumber(name: string, value: string | undefined, usage: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`${name}: expected a positive number, got "${value}"\n${usage}`);
  return n;
}

/** A whole-number option of at least `min` (`-n 0`, `--count 3`); undefined when not given. */
export function wholeNumber(name: string, value: string | undefined, min: number, usage: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < min)
    throw new UsageError(`${name}: expected a whole number of at least ${min}, got "${value}"\n${usage}`);
  return n;
}

/** The instance key a command takes, and with `second` one more argument (needed when `second.missing` words it). */
export function instanceKeyArg(
  positionals: string[],
  usage: string,
  second?: { missing?: (key: string) => string },
): [string, string | undefined] {
  const [key, ...rest] = positionals;
  if (key === undefined) throw new UsageError(`missing the instance key\n${usage}`);
  const next = second ? rest.shift() : undefined;
  if (next === undefined && second?.missing) throw new UsageError(`${second.missing(key)}\n${usage}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"\n${usage}`);
  return [key, next];
}
