import type { ResolvedConfig } from '../../config/resolved.ts';
import { DEFAULT_URL, clientUrlFromUrls, normaliseUrl } from './client-url.ts';
import { ClientError } from './errors.ts';
import { loadLocalConfig, requireConfig, type LocalConfig } from './local-config.ts';
import { pickToken } from './token.ts';

export interface TargetOptions {
  url?: string;
  token?: string;
  configFile?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Where a non-fatal note goes (an unreadable local config that was not asked for). */
  warn: (message: string) => void;
}

/** Works out where the daemon is and which token to send, reading the local config only when needed. */
export interface Target {
  url(): Promise<string>;
  /** The token for `key`; a ClientError (exit 2) when there is none anywhere. Never printed. */
  token(key: string): Promise<string>;
  /** The local config, or a ClientError (exit 2) naming its problems. */
  config(purpose: string): Promise<ResolvedConfig>;
}

export function createTarget(opts: TargetOptions): Target {
  let local: Promise<LocalConfig> | undefined;
  const loadLocal = (): Promise<LocalConfig> => {
    local ??= loadLocalConfig({ file: opts.configFile, cwd: opts.cwd, env: opts.env }).then((l) => {
      if (!l.config && l.explicit) {
        throw new ClientError(`the file given with --config could not be used:\n${l.problems.map((p) => `  ${p}`).join('\n')}`, 2);
      }
      if (!l.config && l.present) opts.warn(`going on without the local config: ${l.file} could not be read (${l.problems[0] ?? 'unknown problem'})`);
      return l;
    });
    return local;
  };

  return {
    async url() {
      if (opts.url) return normaliseUrl(opts.url);
      const { config } = await loadLocal();
      if (!config) return DEFAULT_URL;
      const derived = clientUrlFromUrls(config.settings.Urls);
      if ('problem' in derived) throw new ClientError(`cannot tell where the watchdog listens: ${derived.problem}`, 2);
      return derived.url;
    },
    async token(key) {
      const quick = pickToken({ flag: opts.token, env: opts.env.WATCHDOG_TOKEN });
      if (quick) return quick.token;
      const { config } = await loadLocal();
      const picked = pickToken({ config: config?.instances.find((i) => i.key === key)?.apiToken });
      if (picked) return picked.token;
      throw new ClientError(
        `no token for instance ${key}: pass --token, set WATCHDOG_TOKEN, or run this where the daemon's appsettings.yml gives ${key} an ApiToken or a readable ApiTokenFile`,
        2,
      );
    },
    async config(purpose) {
      return requireConfig(await loadLocal(), purpose);
    },
  };
}
