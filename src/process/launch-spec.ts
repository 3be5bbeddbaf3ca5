import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { ResolvedInstance } from '../config/resolved.ts';
import { MARKER_ENV } from './tracking.ts';

export interface LaunchSpec {
  /** `RunCommand` joined to the instance folder. */
  program: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

/** The environment variable the engine reads the check-in secret from (the cvar `watchdog.token`, `__` for `.`). */
export const TOKEN_ENV = 'ROBUST_CVAR_watchdog__token';

const AGONES_SDK_ENV = ['AGONES_SDK_HTTP_PORT', 'AGONES_SDK_GRPC_PORT'];

/**
 * What a game server inherits from the daemon's environment: all but the CLI's control token, a launch marker (each
 * launch gets its own) and, in Agones mode, the SDK's address, so a kit-built server does not speak to Agones too (a
 * GameServer has one voice). An instance's EnvironmentVariables still set anything.
 */
export function inheritedEnv(
  env: Record<string, string | undefined>,
  opts: { agones: boolean },
): Record<string, string | undefined> {
  // A marker the daemon itself inherited (started from a server's shell) would make its servers look like another's.
  const { WATCHDOG_TOKEN: _controlToken, [MARKER_ENV]: _marker, ...rest } = env;
  if (opts.agones) for (const name of AGONES_SDK_ENV) delete rest[name];
  return rest;
}

/**
 * The command line, working directory and environment of a launch, as the real watchdog's `ServerInstance.Actor.cs`
 * builds them. The secret goes into the environment only: every user can read argv (`ps`).
 */
export function buildLaunchSpec(opts: {
  key: string;
  instance: ResolvedInstance;
  baseUrl: string;
  secret: string;
  providerCvars: Array<[string, string]>;
  env: Record<string, string | undefined>;
}): LaunchSpec {
  const dir = resolve(opts.instance.dir);
  const args = [
    '--cvar',
    `watchdog.key=${opts.key}`,
    '--cvar',
    `watchdog.baseUrl=${opts.baseUrl}`,
    '--config-file',
    resolve(dir, 'config.toml'),
    '--data-dir',
    resolve(dir, 'data'),
    ...opts.instance.settings.Arguments,
  ];
  // Provider overrides come last so they win over the same cvar in Arguments (the engine applies
  // --cvar in order, last wins).
  for (const [name, value] of opts.providerCvars) args.push('--cvar', `${name}=${value}`);

  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(opts.env)) if (value !== undefined) env[name] = value;
  env[TOKEN_ENV] = opts.secret;
  // Assigned after the token, as the real watchdog does: an operator's entry of the same name wins.
  for (const [name, value] of Object.entries(opts.instance.settings.EnvironmentVariables)) env[name] = value;

  return { program: resolve(dir, opts.instance.program), args, cwd: dir, env };
}

/** 64 random bytes, standard base64 (88 characters, never a `:`). */
export function generateSecret(): string {
  return randomBytes(64).toString('base64');
}
