import { accessSync, constants, statSync } from 'node:fs';
import { relative } from 'node:path';
import { readUsersFile } from '../../auth/users-file.ts';
import { displayName } from '../../config/layers.ts';
import { type ListenAddress, listenUrl } from '../../config/listen.ts';
import { loadConfig } from '../../config/load.ts';
import type { ResolvedConfig, ResolvedInstance } from '../../config/resolved.ts';
import { destinationsIn } from '../../config/sections/destinations.ts';
import { ConfigError } from '../../errors.ts';
import { type LimitController, neededControllers, unappliedLines, undelegated } from '../../process/cgroup-limits.ts';
import { parseCommandArgs } from '../client/args.ts';
import type { CommandOptions } from '../registry.ts';

function hostPort(listen: ListenAddress): string {
  const all = listen.host === '*' ? ' (all interfaces)' : listen.host === '0.0.0.0' ? ' (all IPv4 interfaces)' : '';
  return `${listenUrl(listen)}${all}`;
}

/** A short, human summary of a valid configuration: what was read, where it listens, each instance. */
function formatSummary(config: ResolvedConfig, cwd: string): string {
  const { Routes, Format } = config.settings.Notification;
  // How many routes, and where they go (never a URL or token).
  const kinds = Routes.flatMap((r) => destinationsIn(r));
  const routes = `${Routes.length} (Notification.Routes${kinds.length > 0 ? `: ${kinds.join(', ')}` : ''})`;
  const lines = [
    `files:     ${config.files.map((f) => displayName(f, cwd)).join(', ')}`,
    `listen:    ${config.listen.map(hostPort).join(', ')}`,
    `base url:  ${config.baseUrl ?? '(derived from the listen address)'}`,
    `log level: ${config.logLevel}`,
    `webhook:   ${config.webhook ? 'set' : 'none'} (Notification.ChatWebhook, or the real watchdog's DiscordWebhook)`,
    `routes:    ${routes}; format ${Format} (Notification.Format)`,
    `agones:    ${
      config.agones
        ? `on: wraps the one instance for its GameServer (SDK server port ${config.agones.port}, /health every ${config.agones.healthSeconds} s)`
        : 'off (Agones.Enabled, or AGONES_SDK_HTTP_PORT in the environment)'
    }`,
    `instances: ${config.instances.length}`,
  ];
  for (const i of config.instances) {
    const s = i.settings;
    lines.push(
      `  ${i.key}${i.name === i.key ? '' : ` (${JSON.stringify(i.name)})`}`,
      `    update type: ${s.UpdateType === 'CiServer' ? "CiServer (the real watchdog's Jenkins)" : (s.UpdateType ?? 'none')}`,
      `    api port:    ${s.ApiPort}`,
      `    timeout:     ${s.TimeoutSeconds} s`,
      `    program:     ${i.program}`,
      `    folder:      ${i.dir}`,
      `    api token:   ${i.apiToken ? 'set' : 'none (control requests refused)'}`,
    );
  }
  return lines.join('\n') + '\n';
}

/** Update types that never put a server build in place: what RunCommand names must already be there. */
const INSTALLS_NOTHING = new Set<string | undefined>([undefined, 'Local', 'Dummy']);

function problem(program: string): string | undefined {
  try {
    if (!statSync(program).isFile()) return 'is not a file';
  } catch {
    return 'does not exist';
  }
  try {
    accessSync(program, constants.X_OK);
  } catch {
    return 'is not executable (chmod +x it)';
  }
}

/** A warning when an instance's RunCommand cannot run and no update provider installs it. Reads file metadata only. */
function warning(instance: ResolvedInstance, cwd: string): string | undefined {
  const type = instance.settings.UpdateType;
  const what = INSTALLS_NOTHING.has(type) ? problem(instance.program) : undefined;
  if (what === undefined) return undefined;
  const shown = relative(cwd, instance.program) || instance.program;
  const provider = type === undefined ? 'no UpdateType' : `UpdateType ${type}`;
  return `Servers.Instances.${instance.key}.RunCommand: ${shown} ${what}, and with ${provider} no update provider installs it; the server cannot start until it is there`;
}

/** One warning per instance with `Limits` that cannot apply here, naming each limit and why. */
async function limitsWarnings(config: ResolvedConfig): Promise<string[]> {
  const out: string[] = [];
  const marker = config.settings.Process.Tracking === 'Environment';
  for (const i of config.instances) {
    const l = i.settings.Limits ?? {};
    const limits = { memoryMB: l.MemoryMB, cpuPercent: l.CpuPercent, tasks: l.Tasks };
    const wanted = neededControllers(limits);
    if (wanted.length === 0) continue;
    const why = marker
      ? new Map(wanted.map((c): [LimitController, string] => [c, 'Process.Tracking is Environment: no cgroups']))
      : await undelegated(wanted);
    if (why.size === 0) continue;
    const lines = unappliedLines(limits, why).join('; ');
    out.push(
      `Servers.Instances.${i.key}: ${lines}; the server starts without ${why.size === 1 ? 'it' : 'them'}. ` +
        `Under systemd, put "Delegate=yes" in the unit's [Service] section (docs/production.md) so the daemon ` +
        'gets the memory, cpu and pids controllers to hand its launches',
    );
  }
  return out;
}

export const usage = `usage: watchdog check [--config FILE] [--urls URLS]
  Validates the configuration and summarises the instances; touches no folder and no process.
  Warns about an instance whose RunCommand is missing or not executable while no update provider installs it,
  and about Limits that cannot apply here (cgroup v2 controllers not delegated).
  --config FILE   the main configuration file (default: ./appsettings.yml)
  --urls URLS     as for watchdog start`;

export const options = { config: { type: 'string' }, urls: { type: 'string' } } as const satisfies CommandOptions;

export async function run(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, options, usage, 0);
  const cwd = process.cwd();
  const loaded = await loadConfig({ file: values.config, cwd, env: process.env, urls: values.urls });
  if (!loaded.ok) throw new ConfigError(loaded.problems);
  const users = await readUsersFile(loaded.config.usersFile);
  if (!users.ok) throw new ConfigError(users.problems);
  const limits = await limitsWarnings(loaded.config);
  const programs = loaded.config.instances.map((i) => warning(i, cwd)).filter((w) => w !== undefined);
  for (const w of [...loaded.warnings, ...users.warnings, ...programs, ...limits])
    process.stderr.write(`warning: ${w}\n`);
  process.stdout.write(`configuration is valid\n${formatSummary(loaded.config, cwd)}`);
  return 0;
}
