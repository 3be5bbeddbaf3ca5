import { didYouMean } from '../config/suggest.ts';
import { ConfigError, describeError, UsageError } from '../errors.ts';
import { ClientError } from './client/errors.ts';
import { COMMANDS } from './registry.ts';

export const USAGE = `usage: watchdog [command] [options]

commands:
  start [--config F] [--urls U] [--log-level L]   run the daemon (the default command)
  start <key> [--wait]                   start a stopped instance (kept stopped across daemon restarts until then)
  check [--config F] [--urls U]          validate the configuration and list the instances
  import [--config F] [--dry-run] [--force]     import the real watchdog's data.db (revisions, servers left running)
  restart|update|stop|rollback <key>     control an instance (--url, --token or WATCHDOG_TOKEN); rollback --with-data
  hold|release <key> [--for 2h] [--reason R]   hold scheduled restarts and update installs, or end the hold
  backup|backups <key>                   take a snapshot of an instance's data now, or list its snapshots
  restore <key> <backup> [--wait]        put a snapshot of an instance's data back (the server restarts)
  status [key] [--json] [--watch]        show instance states (every instance: the local config, or --user/--password)
  logs <key> [-f] [-n N] [--url U]       show a server's log (this machine's files, or the daemon at --url)
  console <key> [command …]              send a command to the server console (a prompt without one)
  files <key> [path]                     list the shared folders (Files.Folders) or a folder in them
  fetch <key> <path> [--out F]           download a shared file (--continue resumes a partial one)
  user add|passwd|remove|list|totp       edit the users file: accounts, roles (--role R[@KEY]), one-time codes
  key create|list|revoke                 API keys of a user (--user U, --permission P[@KEY], --expires-days N)
  login [--url U] [--user U] [--forget]  log a user in and keep a 30-day key the daemon makes for it
  chart [--format mermaid|dot|json|svg] [--out F]   render the instance statechart
  probe <address> [--json]               read a game server's /status and /info as a launcher does
  manifest <dir> --base-url URL [--out F]       add a build to a manifest
  completion bash|zsh|fish               print a shell completion script

  watchdog <command> --help              a command's options
  watchdog --version                     the version (also -V)

environment: WATCHDOG_URL (--url), WATCHDOG_TOKEN (--token), WATCHDOG_ADMIN (user:password, for --user/--password),
  WATCHDOG_USER (login --user)
`;

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h' || (first === 'help' && rest.length === 0)) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (first === '--version' || first === '-V') {
    // CLI only: the other commands need not read package.json at every run.
    const { VERSION } = await import('../daemon/version.ts');
    process.stdout.write(`watchdog ${VERSION}\n`);
    return 0;
  }
  // `watchdog help status` is `watchdog status --help`.
  if (first === 'help') return main([...rest.slice(0, 1), '--help']);
  // No command, or options only: the daemon, as `npm start` and a bare `watchdog` expect.
  const name = first === undefined || first.startsWith('-') ? 'start' : first;
  const args = name === first ? rest : argv;
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    const hint = didYouMean(name, Object.keys(COMMANDS));
    process.stderr.write(`watchdog: unknown command "${name}"${hint}; \`watchdog --help\` lists the commands\n`);
    return 2;
  }
  try {
    const command = await entry.load();
    // `-h`/`--help` anywhere before `--`: options never take a value starting with `-`, so this cannot be a value.
    const end = args.indexOf('--');
    if ((end < 0 ? args : args.slice(0, end)).some((a) => a === '-h' || a === '--help')) {
      process.stdout.write(command.usage.endsWith('\n') ? command.usage : `${command.usage}\n`);
      return 0;
    }
    return await command.run(args);
  } catch (err) {
    // A ClientError or UsageError is said as is (no cause chain); a ConfigError is the files' problems, one a line.
    if (err instanceof ConfigError) {
      process.stderr.write(err.problems.map((p) => `${p}\n`).join(''));
      return 2;
    }
    if (err instanceof UsageError || err instanceof ClientError) {
      process.stderr.write(`watchdog ${name}: ${err.message}\n`);
      return err instanceof ClientError ? err.exitCode : 2;
    }
    process.stderr.write(`watchdog ${name}: ${describeError(err)}\n`);
    return 1;
  }
}
