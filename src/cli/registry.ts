import type { ParseArgsConfig } from 'node:util';
import type { ControlAction } from '../supervisor/contract.ts';

/** Takes its own arguments, returns the exit code (0 ok, 1 refused or failed, 2 usage or config). */
export type Command = (args: string[]) => Promise<number>;

/** A command's options, as `parseArgs` takes them; completion scripts are generated from the same object. */
export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

interface CommandEntry {
  /** For `watchdog completion fish` descriptions. */
  summary: string;
  /** Its positional argument is an instance key (completed from the local appsettings.yml). */
  instanceKey?: boolean;
  /** Its first positional argument is one of these words (`watchdog user add`). */
  subcommands?: readonly string[];
  /** Loaded only when used, so `watchdog status` does not load the daemon. */
  load: () => Promise<{ run: Command; usage: string; options: CommandOptions }>;
}

const control = (action: ControlAction) => () =>
  import('./commands/control.ts').then((m) => ({ run: m.control(action), usage: m.usage(action), options: m.options }));
/** One of several commands of a module, exported as `<name>`, `<name>Usage` and `<name>Options`. */
const named =
  <N extends string>(
    load: () => Promise<Record<N, Command> & Record<`${N}Usage`, string> & Record<`${N}Options`, CommandOptions>>,
    name: N,
  ) =>
  () =>
    load().then((m) => ({ run: m[name], usage: m[`${name}Usage`], options: m[`${name}Options`] }));
const hold = () => import('./commands/hold.ts');
const backups = () => import('./commands/backups.ts');
const files = () => import('./commands/files.ts');

/** Every command `watchdog` dispatches to, in the order `watchdog --help` lists them. */
export const COMMANDS: Record<string, CommandEntry> = {
  start: { summary: 'run the daemon', load: () => import('./commands/start.ts') },
  check: { summary: 'validate the configuration', load: () => import('./commands/check.ts') },
  import: { summary: "import the real watchdog's data.db", load: () => import('./commands/import.ts') },
  restart: { summary: 'restart an instance', instanceKey: true, load: control('restart') },
  update: { summary: 'update an instance', instanceKey: true, load: control('update') },
  stop: { summary: 'stop an instance', instanceKey: true, load: control('stop') },
  rollback: {
    summary: 'roll an instance back to its previous build (and its data)',
    instanceKey: true,
    load: control('rollback'),
  },
  restore: { summary: "put a backup of an instance's data back", instanceKey: true, load: control('restore') },
  hold: { summary: 'hold scheduled restarts and update installs', instanceKey: true, load: named(hold, 'hold') },
  release: { summary: 'end a maintenance hold', instanceKey: true, load: named(hold, 'release') },
  backup: { summary: "take a snapshot of an instance's data", instanceKey: true, load: named(backups, 'backup') },
  backups: { summary: "list the snapshots of an instance's data", instanceKey: true, load: named(backups, 'backups') },
  status: { summary: 'show instance states', instanceKey: true, load: () => import('./commands/status.ts') },
  logs: { summary: "show a server's log", instanceKey: true, load: () => import('./commands/logs.ts') },
  console: {
    summary: "send commands to a server's console",
    instanceKey: true,
    load: () => import('./commands/console.ts'),
  },
  files: { summary: "list an instance's shared files", instanceKey: true, load: named(files, 'files') },
  fetch: { summary: "download one of an instance's shared files", instanceKey: true, load: named(files, 'fetchFile') },
  user: {
    summary: 'add, change, remove or list users (the users file)',
    subcommands: ['add', 'passwd', 'remove', 'list', 'totp'],
    load: () => import('./commands/users.ts'),
  },
  key: {
    summary: 'create, list or revoke API keys (the users file)',
    subcommands: ['create', 'list', 'revoke'],
    load: () => import('./commands/keys.ts'),
  },
  login: { summary: 'log a user in and keep a key the daemon makes for it', load: () => import('./commands/login.ts') },
  chart: { summary: 'render the instance statechart', load: () => import('./commands/chart.ts') },
  probe: { summary: "read a game server's /status and /info", load: () => import('./commands/probe.ts') },
  manifest: { summary: 'add a build to a manifest', load: () => import('./commands/manifest.ts') },
  completion: { summary: 'print a shell completion script', load: () => import('./commands/completion.ts') },
};
