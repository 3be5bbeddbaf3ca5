import { resolve } from 'node:path';
import type { CheckResult } from './checks.ts';
import type { ResolvedConfig, ResolvedInstance } from './resolved.ts';
import type { AppSettings } from './schema.ts';
import type { AgonesConfig } from './sections/agones.ts';

/** The engine's server program, as the real watchdog defaults `RunCommand` (its `InstanceConfiguration.cs`). */
export function defaultRunCommand(platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? 'bin/Robust.Server.exe' : 'bin/Robust.Server';
}

/** Makes every path absolute and picks each computed value; only called once validation found no problem. */
export function resolveConfig(opts: {
  settings: AppSettings;
  checks: CheckResult;
  agones: AgonesConfig | null;
  files: string[];
  cwd: string;
}): ResolvedConfig {
  const { settings, checks, cwd } = opts;
  const root = settings.Servers.InstanceRoot;
  const instances: ResolvedInstance[] = Object.entries(settings.Servers.Instances).map(([key, s]) => {
    const dir = resolve(cwd, root, key);
    return {
      key,
      name: s.Name ?? key,
      dir,
      apiToken: checks.tokenFiles.get(key) ?? s.ApiToken,
      program: resolve(dir, s.RunCommand ?? defaultRunCommand()),
      settings: s,
    };
  });
  const baseUrl =
    settings.BaseUrl === undefined
      ? undefined
      : settings.BaseUrl.endsWith('/')
        ? settings.BaseUrl
        : `${settings.BaseUrl}/`;
  return {
    files: opts.files,
    workDir: cwd,
    listen: checks.listen ?? [{ host: 'localhost', port: 5000 }],
    baseUrl,
    persistServers: settings.Process.PersistServers,
    dataFile: resolve(cwd, settings.Data.File),
    webhook: settings.Notification.ChatWebhook,
    logLevel: checks.logLevel,
    logOverrides: checks.logOverrides,
    timing: settings.Timing,
    admin: checks.admin,
    agones: opts.agones,
    instances,
    settings,
  };
}
