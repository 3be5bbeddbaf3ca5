import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ResolvedConfig } from '../../config/resolved.ts';
import { ClientError } from './errors.ts';

export interface LocalConfig {
  config: ResolvedConfig | undefined;
  /** Why there is no config (the loader's problems); empty when it loaded. */
  problems: string[];
  /** The file looked for: `--config`, or `appsettings.yml` in the working directory. */
  file: string;
  /** `--config` was given, so failing to load it is an error rather than "no local config". */
  explicit: boolean;
  /** The file exists, so a failure to load it is worth a warning even when not explicit. */
  present: boolean;
}

/**
 * The daemon's configuration as seen from the working directory, for the CLI to find `Urls`,
 * tokens and instance folders. Never throws on a missing or invalid file: the client works with
 * `--url` and `--token` alone.
 */
export async function loadLocalConfig(opts: {
  file?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}): Promise<LocalConfig> {
  const file = resolve(opts.cwd, opts.file ?? 'appsettings.yml');
  const explicit = opts.file !== undefined;
  const present = existsSync(file) || (!explicit && existsSync(join(opts.cwd, 'appsettings.yml')));
  // Loaded on demand: `watchdog restart --url … --token …` must not need (or pay for) the config loader.
  const { loadConfig } = await import('../../config/load.ts');
  const loaded = await loadConfig({ file: opts.file, cwd: opts.cwd, env: opts.env });
  if (loaded.ok) return { config: loaded.config, problems: [], file, explicit, present };
  return { config: undefined, problems: loaded.problems, file, explicit, present };
}

/** The local config, or a ClientError (exit 2) that lists why it could not be read. */
export function requireConfig(local: LocalConfig, purpose: string): ResolvedConfig {
  if (local.config) return local.config;
  const problems = local.problems.map((p) => `  ${p}`).join('\n');
  throw new ClientError(
    `${purpose} needs the local config, and ${local.file} could not be read${problems ? `:\n${problems}` : ''}`,
    2,
  );
}
