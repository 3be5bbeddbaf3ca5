import { resolve } from 'node:path';
import * as v from 'valibot';
import { describeError } from '../errors.ts';
import { checkSettings } from './checks.ts';
import { formatIssues } from './issues.ts';
import { readLayers } from './layers.ts';
import { mergeLayers } from './merge.ts';
import { resolveConfig } from './resolve.ts';
import type { ResolvedConfig } from './resolved.ts';
import { AppSettingsSchema } from './schema.ts';

export type LoadResult = { ok: true; config: ResolvedConfig; warnings: string[] } | { ok: false; problems: string[] };

export interface LoadOptions {
  /** `--config FILE`; default `appsettings.yml` in `cwd`. Relative paths resolve against `cwd`. */
  file?: string;
  /** The daemon's working directory: instance folders and token files resolve against it. */
  cwd: string;
  /** `WATCHDOG_ENV` picks `appsettings.<env>.yml` (default `Production`). */
  env: Record<string, string | undefined>;
}

const ENV_NAME = /^[A-Za-z0-9_-]+$/;

/**
 * Reads, layers, validates and resolves the configuration. Every problem is reported at once, one line each
 * (`<file>: <key.path>: <expected>, got <found>`); touches no folder and never throws on user input.
 */
export async function loadConfig(opts: LoadOptions): Promise<LoadResult> {
  try {
    return await load(opts);
  } catch (err) {
    // A bug, not user input; still a readable line rather than a stack trace.
    return { ok: false, problems: [`could not load the configuration: ${describeError(err)}`] };
  }
}

async function load(opts: LoadOptions): Promise<LoadResult> {
  const cwd = resolve(opts.cwd);
  const env = opts.env.WATCHDOG_ENV?.trim() || 'Production';
  if (!ENV_NAME.test(env)) {
    return { ok: false, problems: [`WATCHDOG_ENV: expected a name of letters, digits, "_" and "-" such as Development, got ${JSON.stringify(env)}`] };
  }
  const main = resolve(cwd, opts.file ?? 'appsettings.yml');

  const read = await readLayers(main, env, cwd);
  if (!read.ok) return read;
  const merged = mergeLayers(read.layers);

  const parsed = v.safeParse(AppSettingsSchema, merged.value);
  const checks = await checkSettings(merged.value, merged.sourceOf, cwd);
  const problems = [...(parsed.success ? [] : formatIssues(parsed.issues, AppSettingsSchema, merged.sourceOf)), ...checks.problems];
  if (!parsed.success || problems.length > 0) return { ok: false, problems: [...new Set(problems)] };

  const config = resolveConfig({ settings: parsed.output, checks, files: read.layers.map((l) => l.file), cwd });
  return { ok: true, config, warnings: [...read.warnings, ...checks.warnings] };
}
