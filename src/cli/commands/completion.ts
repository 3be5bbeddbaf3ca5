import { UsageError } from '../../errors.ts';
import { parseCommandArgs } from '../client/args.ts';
import { type CompletionSpec, isShell, renderCompletion, SHELLS } from '../completion/scripts.ts';
import { COMMANDS, type CommandOptions } from '../registry.ts';

const USAGE = `usage: watchdog completion ${SHELLS.join('|')}
  Prints a completion script: commands, their options, and instance keys from ./appsettings.yml.
  bash:  source <(watchdog completion bash)            (or save it in ~/.local/share/bash-completion/completions/watchdog)
  zsh:   source <(watchdog completion zsh)             (after compinit)
  fish:  watchdog completion fish > ~/.config/fish/completions/watchdog.fish`;
export const usage = USAGE;
export const options = {} as const satisfies CommandOptions;

/** Values an option takes, where they are a fixed list (`chart --format`) or file names. */
const VALUES: Record<string, readonly string[] | 'file' | 'dir'> = {
  config: 'file',
  out: 'file',
  format: ['mermaid', 'dot', 'json'],
  'log-level': ['debug', 'info', 'warn', 'error'],
  'log-format': ['json'],
};

/** What the scripts complete, read from every command's own option list (the one its parser uses). */
async function spec(): Promise<CompletionSpec> {
  const commands = await Promise.all(
    Object.entries(COMMANDS).map(async ([name, entry]) => {
      const { options: opts } = await entry.load();
      const flags = Object.entries(opts)
        .filter(([long]) => long !== 'help')
        .map(([long, o]) => ({
          long,
          short: o.short,
          takesValue: o.type === 'string',
          values: VALUES[long],
        }));
      return {
        name,
        summary: entry.summary,
        instanceKey: entry.instanceKey === true,
        flags: [...flags, { long: 'help', short: 'h', takesValue: false, values: undefined }],
      };
    }),
  );
  return { commands };
}

/** `watchdog completion bash|zsh|fish`: prints the completion script for that shell. */
export async function run(args: string[]): Promise<number> {
  const { positionals } = parseCommandArgs(args, options, USAGE);
  const [shell, ...extra] = positionals;
  if (shell === undefined) throw new UsageError(`which shell? ${SHELLS.join(', ')}\n${USAGE}`);
  if (!isShell(shell)) throw new UsageError(`unknown shell "${shell}"; choose one of ${SHELLS.join(', ')}\n${USAGE}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"\n${USAGE}`);
  process.stdout.write(renderCompletion(shell, await spec()));
  return 0;
}
