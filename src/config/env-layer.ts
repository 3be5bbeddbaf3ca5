import type { Layer } from './layers.ts';

/**
 * The environment name that picks `appsettings.<env>.yml`: `WATCHDOG_ENV`, else the .NET host's
 * `DOTNET_ENVIRONMENT`, else ASP.NET's `ASPNETCORE_ENVIRONMENT`, else `Production`.
 */
export function environmentName(env: Record<string, string | undefined>): { variable: string; name: string } {
  for (const variable of ['WATCHDOG_ENV', 'DOTNET_ENVIRONMENT', 'ASPNETCORE_ENVIRONMENT']) {
    const name = env[variable]?.trim();
    if (name) return { variable, name };
  }
  return { variable: 'WATCHDOG_ENV', name: 'Production' };
}

/** Variables that set `Urls`, as the ASP.NET host reads them; the later one wins. */
const URL_VARIABLES = ['DOTNET_URLS', 'ASPNETCORE_URLS'];

/**
 * Settings from environment variables in the .NET form, one layer per variable so a problem names the variable:
 * `Servers__Instances__main__ApiToken=…` (each `__` is one level down; keys match case-insensitively), and
 * `ASPNETCORE_URLS` (or `DOTNET_URLS`) for `Urls`. Only variables whose first part is a top-level setting
 * (`topKeys`) count, so the rest of the environment (`PATH`, `HOME`, …) is never read as configuration.
 * Sorted by name, so the result does not depend on the order the environment happens to list them in.
 */
export function environmentLayers(env: Record<string, string | undefined>, topKeys: readonly string[]): Layer[] {
  const top = new Set(topKeys.map((k) => k.toLowerCase()));
  const layers: Layer[] = [];
  for (const variable of URL_VARIABLES) {
    const value = env[variable];
    if (value !== undefined && value.trim() !== '')
      layers.push({ file: variable, name: `environment variable ${variable}`, data: { Urls: value } });
  }
  for (const variable of Object.keys(env).sort()) {
    const value = env[variable];
    const parts = variable.split('__');
    const [head = '', last = ''] = [parts[0], parts.at(-1)];
    if (value === undefined || parts.length < 2 || parts.some((p) => p === '')) continue;
    if (!top.has(head.toLowerCase())) continue;
    let data: Record<string, unknown> = { [last]: value };
    for (const part of parts.slice(0, -1).reverse()) data = { [part]: data };
    layers.push({ file: variable, name: `environment variable ${variable}`, data });
  }
  return layers;
}
