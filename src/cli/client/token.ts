export type TokenSource = 'flag' | 'env' | 'config';

/**
 * The API token to send, by precedence: `--token`, then `WATCHDOG_TOKEN`, then the local config's
 * `ApiToken`/`ApiTokenFile`. Empty strings count as unset (an exported but blank variable).
 */
export function pickToken(sources: {
  flag?: string;
  env?: string;
  config?: string;
}): { token: string; from: TokenSource } | undefined {
  if (sources.flag) return { token: sources.flag, from: 'flag' };
  if (sources.env) return { token: sources.env, from: 'env' };
  if (sources.config) return { token: sources.config, from: 'config' };
  return undefined;
}
