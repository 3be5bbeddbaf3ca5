import { UsageError, describeError } from '../errors.ts';

/** A CLI command: takes its own arguments, returns the exit code (0 ok, 1 refused or failed, 2 usage or config). */
export type Command = (args: string[]) => Promise<number>;

/** Each command lives in its own module, loaded only when used so `watchdog status` does not load the daemon. */
const COMMANDS: Record<string, () => Promise<{ run: Command }>> = {
  start: () => import('./commands/start.ts'),
  check: () => import('./commands/check.ts'),
  import: () => import('./commands/import.ts'),
  restart: () => import('./commands/control.ts').then((m) => ({ run: m.control('restart') })),
  update: () => import('./commands/control.ts').then((m) => ({ run: m.control('update') })),
  stop: () => import('./commands/control.ts').then((m) => ({ run: m.control('stop') })),
  rollback: () => import('./commands/control.ts').then((m) => ({ run: m.control('rollback') })),
  status: () => import('./commands/status.ts'),
  logs: () => import('./commands/logs.ts'),
  chart: () => import('./commands/chart.ts'),
  probe: () => import('./commands/probe.ts'),
  manifest: () => import('./commands/manifest.ts'),
};

export const USAGE = `usage: watchdog [command] [options]

commands:
  start [--config F] [--urls U] [--log-level L]   run the daemon (the default command)
  check [--config F] [--urls U]          validate the configuration and list the instances
  import [--config F] [--dry-run] [--force]     import the real watchdog's data.db (revisions, servers left running)
  restart|update|stop|rollback <key>     control an instance (--url, --token or WATCHDOG_TOKEN)
  status [key] [--json] [--watch]        show instance states
  logs <key> [-f] [-n N]                 show a server's log
  chart [--format mermaid|dot|json] [--out F]   render the instance statechart
  probe <address> [--json]               read a game server's /status and /info as a launcher does
  manifest <dir> --base-url URL [--out F]       add a build to a manifest
`;

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  // No command, or options only: the daemon, as `npm start` and a bare `watchdog` expect.
  const name = first === undefined || first.startsWith('-') ? 'start' : first;
  const args = name === first ? rest : argv;
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`watchdog: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    const { run } = await load();
    return await run(args);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`watchdog ${name}: ${err.message}\n`);
      return 2;
    }
    process.stderr.write(`watchdog ${name}: ${describeError(err)}\n`);
    return 1;
  }
}
