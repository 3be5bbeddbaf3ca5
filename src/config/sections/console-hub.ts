/** `Servers.Instances.<key>.Console` and `.Hub`: the server console, and watching the hub list it advertises to. */
import * as v from 'valibot';
import { amount } from '../numbers.ts';

const Positive = (def: number, unit: string) => v.optional(amount(unit, { positive: true }), def);

/** Full server-console access for the instance's token holders and Admin: off unless asked for. */
export const ConsoleSchema = v.optional(
  v.union(
    [
      v.boolean('expected true or false'),
      v.strictObject(
        {
          Enabled: v.optional(v.boolean('expected true or false'), true),
          CommandsPerMinute: Positive(30, 'commands'),
        },
        'expected true, false or a map with Enabled and CommandsPerMinute',
      ),
    ],
    'expected true, false or a map with Enabled and CommandsPerMinute',
  ),
  false,
);

/** The hub watch, for a server that advertises (`hub.advertise`): how often, how long missing, whether to restart. */
export const HubSchema = v.optional(
  v.strictObject(
    {
      Watch: v.optional(v.boolean('expected true or false'), true),
      CheckSeconds: Positive(300, 'seconds'),
      MissingMinutes: Positive(15, 'minutes'),
      RestartWhenMissing: v.optional(v.boolean('expected true or false'), false),
    },
    'expected a map of hub watch settings (Watch, CheckSeconds, MissingMinutes, RestartWhenMissing)',
  ),
  {},
);

/** The console settings whichever form they were written in; null when it is off. */
export function consoleOf(setting: v.InferOutput<typeof ConsoleSchema>): { commandsPerMinute: number } | null {
  if (setting === false) return null;
  if (setting === true) return { commandsPerMinute: 30 };
  return setting.Enabled ? { commandsPerMinute: setting.CommandsPerMinute } : null;
}

/** Linux's PIPE_BUF: a write up to this size is atomic. A command line is bounded well below it. */
export const MAX_COMMAND_BYTES = 1024;

/** Why a command cannot be sent as it is, or null: one line of printable text within the bound. */
export function commandProblem(command: string): string | null {
  if (command.trim() === '') return 'the command is empty';
  if (Buffer.byteLength(command, 'utf8') > MAX_COMMAND_BYTES - 1)
    return `the command is longer than ${MAX_COMMAND_BYTES - 1} bytes`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(command)) return 'the command holds a newline or another control character';
  return null;
}
