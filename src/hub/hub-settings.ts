import { loadSettings } from '../kit/settings.ts';

/**
 * Where a server advertises itself, read as the engine reads it (RobustToolbox `HubManager`): `hub.advertise`
 * (false by default), `hub.server_url` (the `ss14://` address players connect to; when empty the engine guesses
 * it from an IP lookup and logs "Guessed server address to be …"), `hub.hub_urls` (comma-separated, default the
 * official hub) and `hub.advertise_interval` (120 s). From the server's launch arguments and environment, so
 * config.toml, `ROBUST_CVAR_*` and `--cvar` count in the engine's order.
 */
export interface HubSettings {
  /** '' when unset: the address is learnt from the server's log. */
  serverUrl: string;
  hubUrls: string[];
  intervalSeconds: number;
  /** Settings that make advertising fail, found before any request (a hub URL the engine would mangle). */
  problems: string[];
}

export const DEFAULT_HUB = 'https://hub.spacestation14.com/';

/** The server's hub settings, or null when it does not advertise. Throws on a config.toml that cannot be read. */
export function hubSettingsOf(argv: readonly string[], env: NodeJS.ProcessEnv): HubSettings | null {
  const s = loadSettings({ argv, env });
  if (!s.bool('hub.advertise', false)) return null;
  const hubUrls = s
    .string('hub.hub_urls', DEFAULT_HUB)
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  const problems: string[] = [];
  for (const url of hubUrls) {
    // The engine appends `api/servers/advertise` to each entry as text: without the slash the request goes astray.
    if (!url.endsWith('/'))
      problems.push(
        `hub.hub_urls entry ${url} lacks its trailing slash: the engine posts to ${url}api/servers/advertise`,
      );
  }
  const serverUrl = s.string('hub.server_url', '').trim();
  if (serverUrl !== '' && !/^ss14s?:\/\/[^/\s]+/.test(serverUrl))
    problems.push(`hub.server_url ${serverUrl} is not an ss14:// or ss14s:// address: hubs refuse it`);
  return { serverUrl, hubUrls, intervalSeconds: s.int('hub.advertise_interval', 120), problems };
}
