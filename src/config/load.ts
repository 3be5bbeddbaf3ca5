import { dirname, resolve } from 'node:path';
import * as v from 'valibot';
import { describeError } from '../errors.ts';
import { bindScalars, canonicalKeys } from './binding.ts';
import { checkSettings } from './checks.ts';
import { type ExposedTokenPolicy, engineTimeoutLines, exposedTokenLines } from './exposure.ts';
import { formatIssues, problemLine } from './issues.ts';
import { environmentLayers, environmentName, type Layer, readLayers } from './layers.ts';
import { mergeLayers, type ReportProblem } from './merge.ts';
import { type AppSettings, AppSettingsSchema } from './schema.ts';
import { type AgonesConfig, checkAgones } from './sections/agones.ts';

export type LoadResult =
  | { ok: true; config: ReturnType<typeof resolveConfig>; warnings: string[] }
  | { ok: false; problems: string[] };

export interface LoadOptions {
  /** `--config FILE`; default `appsettings.yml` in `cwd`, against which relative paths resolve. */
  file?: string;
  cwd: string;
  /** Picks `appsettings.<env>.yml`; its .NET-style variables override the files. */
  env: Record<string, string | undefined>;
  /** `--urls`: wins over every file and variable. */
  urls?: string;
  /** A weak token while `Urls` reaches beyond this machine: a problem (`start`) or a warning (`check`, default). */
  exposedTokens?: ExposedTokenPolicy;
}

const ENV_NAME = /^[A-Za-z0-9_-]+$/;

/**
 * Reads, layers, validates and resolves the configuration. Every problem is reported at once, one line each
 * (`<file>: <key.path>: <expected>, got <found>`); touches no folder and never throws on user input.
 */
export async function loadConfig(opts: LoadOptions): Promise<LoadResult> {
  // A throw is a bug, not user input; still a readable line rather than a stack trace.
  return load(opts).catch((err: unknown) => ({
    ok: false,
    problems: [`could not load the configuration: ${describeError(err)}`],
  }));
}

async function load(opts: LoadOptions): Promise<LoadResult> {
  const cwd = resolve(opts.cwd);
  const { variable, name: env } = environmentName(opts.env);
  if (!ENV_NAME.test(env)) {
    const expected = 'expected a name of letters, digits, "_" and "-" such as Development';
    return { ok: false, problems: [`${variable}: ${expected}, got ${JSON.stringify(env)}`] };
  }
  const main = resolve(cwd, opts.file ?? 'appsettings.yml');

  const read = await readLayers(main, env, cwd);
  if (!read.ok) return read;
  const topKeys = Object.keys(AppSettingsSchema.entries);
  const extra: Layer[] = environmentLayers(opts.env, topKeys);
  if (opts.urls !== undefined) extra.push({ file: '--urls', name: '--urls', data: { Urls: opts.urls } });
  const keyProblems: string[] = [];
  const layers = [...read.layers, ...extra].map((layer) => {
    const canonical = canonicalKeys(layer.data, AppSettingsSchema, layer.name);
    keyProblems.push(...canonical.problems);
    return { ...layer, data: canonical.data };
  });
  const merged = mergeLayers(layers);
  const bound = bindScalars(merged.value, AppSettingsSchema) as Record<string, unknown>;

  const parsed = v.safeParse(AppSettingsSchema, bound);
  const checks = await checkSettings(bound, merged.sourceOf, cwd);
  const problem: ReportProblem = (path, expected, found) =>
    checks.problems.push(problemLine(merged.sourceOf(path), path, expected, found));
  const agones = checkAgones(bound, opts.env, problem);
  const policy = opts.exposedTokens ?? 'warn';
  const exposed = exposedTokenLines(bound, checks.listen, checks.tokenFiles, merged.sourceOf, policy);
  const problems = [
    ...keyProblems,
    ...(parsed.success ? [] : formatIssues(parsed.issues, AppSettingsSchema, merged.sourceOf)),
    ...checks.problems,
    ...(policy === 'refuse' ? exposed : []),
  ];
  if (!parsed.success || problems.length > 0) return { ok: false, problems: [...new Set(problems)] };

  const files = read.layers.map((l) => l.file);
  const config = resolveConfig(parsed.output, checks, {
    cwd,
    main,
    files,
    agones,
    oidcClientSecret: checks.oidcSecret,
  });
  const warnings = [...read.warnings, ...checks.warnings, ...(policy === 'warn' ? exposed : [])];
  return { ok: true, config, warnings: [...warnings, ...engineTimeoutLines(bound, merged.sourceOf)] };
}

/** The configuration after validation: every path made absolute, each computed value picked. */
export function resolveConfig(
  settings: AppSettings,
  checks: Awaited<ReturnType<typeof checkSettings>>,
  more: {
    cwd: string;
    main: string;
    files: string[];
    agones: AgonesConfig | null;
    oidcClientSecret: string | undefined;
  },
) {
  const { cwd, main } = more;
  const instances = Object.entries(settings.Servers.Instances).map(([key, s]) => {
    const dir = resolve(cwd, settings.Servers.InstanceRoot, key);
    return {
      key,
      name: s.Name ?? key,
      dir,
      /** Undefined refuses all control requests. */
      apiToken: checks.tokenFiles.get(key) ?? s.ApiToken,
      program: resolve(dir, s.RunCommand ?? defaultRunCommand()),
      settings: s,
    };
  });
  return {
    /** In the order they were layered. */
    files: more.files,
    workDir: cwd,
    listen: checks.listen ?? [{ host: 'localhost', port: 5000 }],
    /** Ends with `/`; undefined: derived from the bound address. */
    baseUrl: settings.BaseUrl?.replace(/\/?$/, '/'),
    persistServers: settings.Process.PersistServers,
    /** The real watchdog's SQLite file, imported from when present. */
    dataFile: resolve(cwd, settings.Data.File),
    usersFile:
      settings.Users.File === undefined ? resolve(dirname(main), 'users.yml') : resolve(cwd, settings.Users.File),
    webhook: settings.Notification.ChatWebhook,
    logLevel: checks.logLevel,
    logOverrides: checks.logOverrides,
    timing: settings.Timing,
    admin: checks.admin,
    agones: more.agones,
    instances,
    settings,
    /** Never logged. */
    oidcClientSecret: more.oidcClientSecret,
  };
}

/** The engine's server program, as the real watchdog defaults `RunCommand` (its `InstanceConfiguration.cs`). */
export function defaultRunCommand(platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? 'bin/Robust.Server.exe' : 'bin/Robust.Server';
}
