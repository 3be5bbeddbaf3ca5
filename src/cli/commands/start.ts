import { resolve } from 'node:path';
import { readUsersFile } from '../../auth/users-file.ts';
import { loadConfig } from '../../config/load.ts';
import { startConfigReload } from '../../daemon/reload.ts';
import { runDaemon } from '../../daemon/run.ts';
import { ConfigError, UsageError } from '../../errors.ts';
import { configureLogging, createLogger, parseLogLevel } from '../../log.ts';
import { parseCommandArgs } from '../client/args.ts';
import type { CommandOptions } from '../registry.ts';

export const usage = `usage: watchdog [start] [--config FILE] [--urls URLS] [--log-level LEVEL] [--log-format json] [--allow-weak-tokens]
                      [--inspect [--inspect-port PORT]]
  Runs the daemon until SIGINT/SIGTERM; SIGHUP or a change to the configuration files reloads it.
  \`watchdog start <key> [--wait] [--url URL] [--token T]\` instead starts a stopped instance of a running daemon
  (options as for watchdog restart; a running instance is left alone).
  --config FILE       the main configuration file (default: ./appsettings.yml)
  --urls URLS         where to listen, overriding Urls (e.g. http://localhost:5000)
  --log-level LEVEL   debug, info, warn or error (overrides Serilog.MinimumLevel)
  --log-format json   one JSON object per log line
  --allow-weak-tokens start even though Urls reaches beyond this machine and an instance's ApiToken is the
                      documentation's example or shorter than 16 characters (refused without it)
  --inspect           the Stately inspector for the instances' statecharts: a page on 127.0.0.1 (printed at start)
                      that shows every instance actor live; off by default, for developers
  --inspect-port PORT its port (default 8080; 0 for any free one)`;

export const options = {
  config: { type: 'string' },
  urls: { type: 'string' },
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
  'allow-weak-tokens': { type: 'boolean' },
  inspect: { type: 'boolean' },
  'inspect-port': { type: 'string' },
} as const satisfies CommandOptions;

/** Options of either form of start that take a value: the word after one is its value, not an instance key. */
const VALUE_OPTIONS = new Set(
  [...Object.entries(options).flatMap(([n, o]) => (o.type === 'string' ? [n] : [])), 'url', 'token', 'timeout'].map(
    (n) => `--${n}`,
  ),
);

/** Whether the arguments name an instance (`watchdog start lrp --wait`) rather than only the daemon's options. */
function instanceKeyGiven(args: string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '--') return i + 1 < args.length;
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return true;
  }
  return false;
}

export async function run(args: string[]): Promise<number> {
  // `watchdog start <key>`: a client command that starts a stopped instance, not the daemon.
  if (instanceKeyGiven(args)) {
    // CLI only: the daemon never runs it.
    const { startInstance } = await import('./control.ts');
    return startInstance(args);
  }
  const { values } = parseCommandArgs(args, options, usage, 0);
  const cliLevel = values['log-level'];
  if (cliLevel !== undefined && !parseLogLevel(cliLevel))
    throw new UsageError(`--log-level: expected debug, info, warn or error, got "${cliLevel}"`);
  const inspectPort = Number(values['inspect-port'] ?? 8080);
  if (!Number.isInteger(inspectPort) || inspectPort < 0 || inspectPort > 65535)
    throw new UsageError(`--inspect-port: expected a port from 0 to 65535, got "${values['inspect-port']}"`);

  const loadOptions = {
    file: values.config,
    cwd: process.cwd(),
    env: process.env,
    urls: values.urls,
    exposedTokens: values['allow-weak-tokens'] ? ('warn' as const) : ('refuse' as const),
  };
  const loaded = await loadConfig(loadOptions);
  if (!loaded.ok) throw new ConfigError(loaded.problems);
  const { config } = loaded;
  // A broken users file refuses the start as a broken appsettings.yml does: nobody would be let in as meant.
  const users = await readUsersFile(config.usersFile);
  if (!users.ok) throw new ConfigError(users.problems);
  configureLogging({
    level: parseLogLevel(cliLevel) ?? config.logLevel,
    overrides: config.logOverrides,
    json: values['log-format'] === 'json' ? true : undefined,
  });
  const log = createLogger('watchdog');
  for (const w of [...loaded.warnings, ...users.warnings]) log.warn(w);

  // A signal while starting would otherwise end the process (the default action), leaving the servers launched so
  // far behind: remember it and act on it once the daemon is up.
  let hupWhileStarting = false;
  let stopWhileStarting: NodeJS.Signals | null = null;
  const onEarlyHup = () => (hupWhileStarting = true);
  const onEarlyStop = (sig: NodeJS.Signals) => (stopWhileStarting ??= sig);
  const STOPS = ['SIGINT', 'SIGTERM'] as const;
  process.on('SIGHUP', onEarlyHup);
  for (const s of STOPS) process.on(s, onEarlyStop);
  const inspector = values.inspect
    ? await (await import('../../daemon/inspector.ts')).startInspector(inspectPort, log.child('inspect'))
    : null;
  // A daemon that cannot start must not leave the inspector's listener holding the process open.
  const daemon = await runDaemon(config, {
    guardProcess: true,
    users: users.db,
    ...(inspector ? { inspect: inspector.inspect } : {}),
  }).catch(async (err: unknown) => {
    await inspector?.stop();
    // Nothing is left to stop: a signal may end the process again.
    for (const s of STOPS) process.off(s, onEarlyStop);
    throw err;
  });
  const reload = startConfigReload({
    mainFile: resolve(loadOptions.cwd, values.config ?? 'appsettings.yml'),
    load: () => loadConfig(loadOptions),
    apply: (next) => daemon.reconfigure(next),
    initial: config,
    log: log.child('config'),
    // --log-level wins over the file, at start and at every reload.
    onApplied: (next) =>
      configureLogging({ level: parseLogLevel(cliLevel) ?? next.logLevel, overrides: next.logOverrides }),
  });
  process.off('SIGHUP', onEarlyHup);
  if (hupWhileStarting) process.emit('SIGHUP', 'SIGHUP');
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.warn(`second ${sig}: exiting now`);
      process.exit(1);
    }
    reload.stop();
    void daemon.shutdown(sig);
  };
  for (const s of STOPS) process.on(s, onSignal).off(s, onEarlyStop);
  if (stopWhileStarting) onSignal(stopWhileStarting);
  await daemon.done;
  await inspector?.stop();
  reload.stop();
  for (const s of STOPS) process.off(s, onSignal);
  return 0;
}
