import { AUTH_MODES, type AuthMode, type Link } from '../kit/schemas.ts';
import type { Settings } from '../kit/settings.ts';
import { SettingsError } from '../kit/settings.ts';
import type { Logger } from '../log.ts';

/** Everything the demo server reads from its cvars, read once at startup (see README.md beside this file). */
export type DemoConfig = ReturnType<typeof readDemoConfig>;

/** `auth.mode` as the engine stores it (an enum number, in AUTH_MODES' order) or by name, any case. */
function authMode(raw: string, log: Logger): AuthMode {
  const text = raw.trim().toLowerCase();
  const mode = AUTH_MODES.find((m, i) => m.toLowerCase() === text || String(i) === text);
  if (mode) return mode;
  log.warn(`auth.mode "${raw}" is not Optional, Required or Disabled (or 0, 1, 2); using Required`);
  return 'Required';
}

/** `hub.tags`: a comma list, trimmed, empty entries dropped (the engine, trimming last, keeps `"a, ,b"`'s). */
export function splitTags(raw: string): string[] {
  return raw
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
}

/** `status.links`: a JSON array of `{name, icon?, url}`; a TOML `links = [...]` or `[[status.links]]` arrives as JSON too. */
export function parseLinks(raw: string, log: Logger): Link[] {
  if (raw.trim() === '') return [];
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch (err) {
    log.warn('status.links is not JSON; serving no links', {
      error: err,
      example: '[{"name":"Wiki","icon":"wiki","url":"https://wiki.example"}]',
    });
    return [];
  }
  if (!Array.isArray(list)) {
    log.warn('status.links must be a JSON array of {name, icon?, url}; serving no links');
    return [];
  }
  const links: Link[] = [];
  for (const item of list as unknown[]) {
    const { name, icon, url } = (item ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || typeof url !== 'string' || (icon !== undefined && typeof icon !== 'string')) {
      log.warn('skipping a status.links entry without string name and url', { entry: item });
      continue;
    }
    links.push(icon === undefined ? { name, url } : ({ name, icon, url } as Link));
  }
  return links;
}

/** `status.bind`: `host:port`, `[v6]:port`, `*:port` (all interfaces) or just a host; default 127.0.0.1 and `net.port`. */
export function parseBind(raw: string, port: number): { host: string; port: number } {
  const text = raw.trim();
  if (text === '') return { host: '127.0.0.1', port };
  const m = /^(?:\[([^\]]+)\]|([^:]*))(?::(\d+))?$/.exec(text);
  if (!m) throw new SettingsError(`status.bind "${raw}" is not host:port (e.g. 127.0.0.1:1212, [::1]:1212 or *:1212)`);
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '*' || host === '' ? '0.0.0.0' : host, port: m[3] === undefined ? port : Number(m[3]) };
}

export function readDemoConfig(s: Settings, log: Logger) {
  const port = s.int('net.port', 1212);
  const bind = parseBind(s.string('status.bind'), port);
  const crashAfter = s.float('demo.crash_after', 0);
  const throwAfter = s.float('demo.throw_after', 0);
  const privacy = {
    link: s.string('status.privacy_policy_link', 'https://example.com/privacy'),
    identifier: s.string('status.privacy_policy_identifier'),
    version: s.string('status.privacy_policy_version'),
  };
  return {
    hostname: s.string('game.hostname', 'Demo Server'),
    desc: s.string('game.desc', 'A small demo game server running on the game-server kit.'),
    tags: splitTags(s.string('hub.tags')),
    softMaxPlayers: s.int('game.soft_max_players', 32),
    authMode: authMode(s.string('auth.mode', 'Required'), log),
    connectAddress: s.string('status.connectaddress'),
    links: parseLinks(s.string('status.links'), log),
    // Sent only when all three are set, as the engine does.
    privacyPolicy: privacy.link && privacy.identifier && privacy.version ? privacy : undefined,
    build: {
      engineVersion: s.string('build.engine_version', '0.1.0'),
      forkId: s.string('build.fork_id', 'demo'),
      version: s.string('build.version'),
      downloadUrl: s.string('build.download_url'),
      hash: s.string('build.hash'),
      manifestUrl: s.string('build.manifest_url'),
      manifestDownloadUrl: s.string('build.manifest_download_url'),
      manifestHash: s.string('build.manifest_hash'),
    },
    /** UDP game port; the status API uses the same number unless `status.bind` names another. */
    port,
    udpHost: s.string('net.bindto', '127.0.0.1').split(',')[0]?.trim() || '127.0.0.1',
    statusEnabled: s.bool('status.enabled', true),
    statusHost: bind.host,
    statusPort: bind.port,
    roundSeconds: Math.max(0.1, s.float('game.round_length', 300)),
    playerTimeoutSeconds: Math.max(0.1, s.float('demo.player_timeout', 30)),
    crashAfterSeconds: crashAfter > 0 ? crashAfter : undefined,
    /** For tests: an uncaught error this many seconds after start (a fatal error, as opposed to a crash). */
    throwAfterSeconds: throwAfter > 0 ? throwAfter : undefined,
    ignoreShutdown: s.bool('demo.ignore_shutdown', false),
  };
}
