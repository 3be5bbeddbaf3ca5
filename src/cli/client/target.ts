import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { apiKeyId } from '../../auth/api-keys.ts';
import { type ListenAddress, listenUrl } from '../../config/listen.ts';
import type { ResolvedConfig } from '../../config/resolved.ts';
import type { CommandOptions } from '../registry.ts';
import { ClientError } from './errors.ts';
import { type AdminLogin, basic, type Endpoint, fetchAllStatus, UnknownInstanceError } from './http.ts';
import { storedLogin } from './logins.ts';

/** The flags of every command that talks to a daemon: where it is and the instance's token. */
export const TARGET_FLAGS = {
  url: { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string' },
} as const satisfies CommandOptions;

export const TARGET_USAGE = `  --url URL     the watchdog's address (default: WATCHDOG_URL, else Urls from appsettings.yml, else http://localhost:5000)
  --token T     the instance's ApiToken, or an API key (default: WATCHDOG_TOKEN, else the local appsettings.yml)
  --config F    the appsettings.yml to read the address and token from`;

/** The daemon's Admin credentials, for commands that may act on every instance. */
export const ADMIN_FLAGS = { user: { type: 'string' }, password: { type: 'string' } } as const satisfies CommandOptions;

/** A stderr note that does not stop the command. */
export const warnTo = (command: string) => (message: string) => {
  process.stderr.write(`watchdog ${command}: ${message}\n`);
};

/** The daemon's default address when neither `--url` nor a local `Urls` says otherwise (ASP.NET's default). */
export const DEFAULT_URL = 'http://localhost:5000';

/** Hosts that mean "every interface" (`+` and `[::]` are read as these); a client reaches them here. */
const WILDCARD_HOSTS = new Set(['*', '0.0.0.0', '::']);

/** The address a client on this machine uses to reach a daemon listening on `address`: `*:5000` → `localhost:5000`. */
export const clientUrl = (address: ListenAddress): string =>
  listenUrl(WILDCARD_HOSTS.has(address.host) ? { ...address, host: 'localhost' } : address);

/** `--url` without a trailing slash, so messages and request paths read cleanly. */
export const normaliseUrl = (url: string): string => url.replace(/\/+$/, '');

export interface TargetOptions {
  url?: string;
  token?: string;
  /** Either part missing is taken from `WATCHDOG_ADMIN` (`user:password`). */
  user?: string;
  password?: string;
  config?: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Where a non-fatal note goes (an unreadable local config that was not asked for). */
  warn: (message: string) => void;
}

/** The local config for `Urls` and tokens, else why not (`--url` and `--token` suffice); a bad `--config` throws. */
async function loadLocalConfig(opts: TargetOptions): Promise<{ config?: ResolvedConfig; problems: string[] }> {
  const file = resolve(opts.cwd, opts.config ?? 'appsettings.yml');
  // Loaded on demand: `watchdog restart --url … --token …` must not need (or pay for) the config loader.
  const { loadConfig } = await import('../../config/load.ts');
  const loaded = await loadConfig({ file: opts.config, cwd: opts.cwd, env: opts.env });
  if (loaded.ok) return { config: loaded.config, problems: [] };
  if (opts.config !== undefined) {
    const problems = loaded.problems.map((p) => `  ${p}`).join('\n');
    throw new ClientError(`the file given with --config could not be used:\n${problems}`, 2);
  }
  if (existsSync(file) || existsSync(join(opts.cwd, 'appsettings.yml')))
    opts.warn(
      `going on without the local config: ${file} could not be read (${loaded.problems[0] ?? 'unknown problem'})`,
    );
  return { problems: loaded.problems };
}

export function createTarget(opts: TargetOptions) {
  let local: ReturnType<typeof loadLocalConfig> | undefined;
  const localConfig = async () => {
    local ??= loadLocalConfig(opts);
    return (await local).config;
  };
  // Blank values count as unset (an exported but empty variable).
  const givenToken = opts.token || opts.env.WATCHDOG_TOKEN || undefined;
  const givenUrl = opts.url || opts.env.WATCHDOG_URL || undefined;

  /** `--url`, else `WATCHDOG_URL`, else the local `Urls`, else http://localhost:5000. */
  const url = async (): Promise<string> => {
    if (givenUrl) {
      // `localhost:5000` would otherwise fail later as "unknown scheme", which reads like a network problem.
      if (!/^https?:\/\//i.test(givenUrl)) {
        const from = opts.url ? '--url' : 'WATCHDOG_URL';
        const guess = /^[a-z][a-z0-9+.-]*:\/\//i.test(givenUrl) ? '' : ` (did you mean http://${givenUrl}?)`;
        throw new ClientError(`${from} "${givenUrl}" is not an http:// or https:// address${guess}`, 2);
      }
      return normaliseUrl(givenUrl);
    }
    const config = await localConfig();
    if (!config) return DEFAULT_URL;
    // The first address of `Urls`, as the loader parsed it.
    const [first = { host: 'localhost', port: 5000 }] = config.listen;
    if (first.port === 0)
      throw new ClientError(
        `cannot tell where the watchdog listens: Urls "${config.settings.Urls}" uses port 0 (a free port picked when the daemon starts); pass --url with the address the daemon logged`,
        2,
      );
    return clientUrl(first);
  };

  /** The local config's token for `key` (never printed); an UnknownInstanceError when it does not name `key`. */
  const token = async (key: string): Promise<string> => {
    if (givenToken) return givenToken;
    const config = await localConfig();
    const instance = config?.instances.find((i) => i.key === key);
    if (config && !instance)
      throw new UnknownInstanceError(
        key,
        config.instances.map((i) => i.key),
      );
    if (instance?.apiToken) return instance.apiToken;
    throw new ClientError(
      `no token for instance ${key}: pass --token, set WATCHDOG_TOKEN, or run this where the daemon's appsettings.yml gives ${key} an ApiToken or a readable ApiTokenFile`,
      2,
    );
  };

  /** Admin credentials, or undefined; exit 2 when half given. */
  const admin = (): AdminLogin | undefined => {
    // `user:password` split at the first colon, as HTTP Basic does.
    const env = opts.env.WATCHDOG_ADMIN || undefined;
    const colon = env?.indexOf(':') ?? -1;
    if (env !== undefined && colon < 0)
      throw new ClientError(
        'WATCHDOG_ADMIN must be user:password (the Admin.Username and Admin.Password of the daemon)',
        2,
      );
    const username = opts.user ?? env?.slice(0, colon);
    const password = opts.password ?? env?.slice(colon + 1);
    if (username === undefined && password === undefined) return undefined;
    if (username === undefined || password === undefined) {
      throw new ClientError(
        `${username === undefined ? '--password needs --user' : '--user needs --password'} (or WATCHDOG_ADMIN=user:password)`,
        2,
      );
    }
    return { authorization: basic(username, password) };
  };

  // The login `watchdog login` kept for this address: read once per command, however many instances it asks about.
  let kept: Promise<AdminLogin | undefined> | undefined;
  const keptLogin = () => {
    kept ??= url().then((u) => storedLogin(u, opts.env));
    return kept;
  };

  return {
    urlGiven: givenUrl !== undefined,
    tokenGiven: givenToken !== undefined,
    url,
    token,
    admin,
    localConfig,
    login: async () => admin() ?? (await keptLogin()),
    /** For instance `key`: the token given, else the kept login, else the local config's token. Never printed. */
    async authorization(key: string): Promise<string> {
      // An API key (`watchdog key create`) speaks for its user; any other token is the instance's ApiToken.
      if (givenToken) return apiKeyId(givenToken) === undefined ? basic(key, givenToken) : `Bearer ${givenToken}`;
      const login = await keptLogin();
      return login ? login.authorization : basic(key, await token(key));
    },
    /** The local config, or a ClientError (exit 2) naming why it could not be read. */
    async config(purpose: string): Promise<ResolvedConfig> {
      const config = await localConfig();
      if (config) return config;
      const file = resolve(opts.cwd, opts.config ?? 'appsettings.yml');
      const problems = (await local)?.problems.map((p) => `\n  ${p}`).join('') ?? '';
      throw new ClientError(
        `${purpose} needs the local config, and ${file} could not be read${problems && `:${problems}`}`,
        2,
      );
    },
  };
}
export type Target = ReturnType<typeof createTarget>;

/** The daemon `command`'s flags name, seen from this process's folder and environment. */
export const targetOf = (command: string, values: Omit<TargetOptions, 'cwd' | 'env' | 'warn'>): Target =>
  createTarget({ ...values, cwd: process.cwd(), env: process.env, warn: warnTo(command) });

/** How long the list of instances may take when it only decorates an error message. */
const LIST_TIMEOUT_MS = 3000;

/** Runs `body` against instance `key` of the target's daemon, under withInstanceList. */
export async function atInstance<T>(target: Target, key: string, body: (ep: Endpoint) => Promise<T>): Promise<T> {
  const url = await target.url();
  return withInstanceList(target, async () => body({ url, key, authorization: await target.authorization(key) }));
}

/** Runs `body`; an unknown instance is reported with the daemon's (else the local config's) list, asked only then. */
export async function withInstanceList<T>(target: Target, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (!(err instanceof UnknownInstanceError) || err.known !== undefined) throw err;
    const keys = (rows: readonly { key: string }[] | undefined) => rows?.map((r) => r.key);
    const fromDaemon = async () =>
      keys(await fetchAllStatus(await target.url(), await target.login(), LIST_TIMEOUT_MS));
    const fromConfig = async () => keys((await target.localConfig())?.instances);
    const known = (await fromDaemon().catch(() => undefined)) ?? (await fromConfig().catch(() => undefined));
    throw new UnknownInstanceError(err.key, known, { cause: err });
  }
}
