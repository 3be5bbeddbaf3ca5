import { join } from 'node:path';
import { stringify } from 'yaml';
import { ROOT } from './env.ts';

export const DEMO = join(ROOT, 'bin/demo-server');

export interface InstanceOpts {
  key?: string;
  /** null leaves ApiToken out (control refused). */
  token?: string | null;
  port: number;
  runCommand?: string;
  /**
   * 30 unless said: a test about hangs says how short; the rest must not see a late check-in on a starved machine
   * as one (a 4 s default killed servers of tests that were about something else).
   */
  timeoutSeconds?: number;
  args?: string[];
  extra?: string;
}

/**
 * The argv a launch starts with, before the instance's `Arguments`: the launch contract the engine parses
 * (`watchdog.key`, `watchdog.baseUrl` as the daemon's address, then the instance's config.toml and data folder).
 */
export function contractArgv(key: string, baseUrl: string, instanceDir: string): string[] {
  return [
    '--cvar',
    `watchdog.key=${key}`,
    '--cvar',
    `watchdog.baseUrl=${baseUrl}`,
    '--config-file',
    join(instanceDir, 'config.toml'),
    '--data-dir',
    join(instanceDir, 'data'),
  ];
}

/**
 * How often a test's server checks in: eight times in its TimeoutSeconds, so a late check-in on a starved machine is
 * not a hang, but at most once a second. Each check-in costs the server and the daemon about a millisecond of CPU
 * apiece, and the suite's servers run for thousands of seconds in all.
 */
export const checkinSeconds = (timeoutSeconds = 30): number => Math.min(1, timeoutSeconds / 8);

/** An appsettings.yml for tests: loopback on a free port, every wait shrunk. */
export function testConfig(opts: {
  webhook?: string;
  persist?: boolean;
  instances: InstanceOpts[];
  extra?: string;
}): string {
  const lines = [
    'Urls: http://127.0.0.1:0',
    ...(opts.webhook ? ['Notification:', `  ChatWebhook: ${opts.webhook}`] : []),
    'Process:',
    `  PersistServers: ${opts.persist ? 'true' : 'false'}`,
    'Timing:',
    '  ShutdownRequestSeconds: 1',
    '  ShutdownExitSeconds: 1',
    '  BackoffInitialSeconds: 0.3',
    '  BackoffMaxSeconds: 1',
    '  StableRunSeconds: 30',
    '  WebhookRetryBaseSeconds: 0.1',
    '  RejectedCheckinLogSeconds: 0',
    ...(opts.extra ? [opts.extra] : []),
    'Servers:',
    '  Instances:',
  ];
  for (const i of opts.instances) {
    const every = checkinSeconds(i.timeoutSeconds);
    const args = ['--cvar', `net.port=${i.port}`, '--cvar', `watchdog.checkin_interval=${every}`, ...(i.args ?? [])];
    lines.push(
      `    ${i.key ?? 'demo'}:`,
      ...(i.token === null ? [] : [`      ApiToken: ${JSON.stringify(i.token ?? 'tok')}`]),
      `      ApiPort: ${i.port}`,
      `      RunCommand: ${JSON.stringify(i.runCommand ?? DEMO)}`,
      `      TimeoutSeconds: ${i.timeoutSeconds ?? 30}`,
      '      DumpOnTimeout: false',
      `      Arguments: ${JSON.stringify(args)}`,
      ...(i.extra ? [i.extra] : []),
    );
  }
  return lines.join('\n') + '\n';
}

/**
 * appsettings.yml as YAML from objects: the daemon on loopback (`urlsPort`, 0 by default), PersistServers
 * (false by default), `timing` as the Timing section and `instances` (key → the instance's keys) as the instances.
 */
export function appsettingsYaml(
  instances: Record<string, unknown>,
  opts: { urlsPort?: number; persist?: boolean; timing: Record<string, number> },
): string {
  return stringify({
    Urls: `http://127.0.0.1:${opts.urlsPort ?? 0}`,
    Process: { PersistServers: opts.persist ?? false },
    Timing: opts.timing,
    Servers: { Instances: instances },
  });
}
