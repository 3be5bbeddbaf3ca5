import type { AnswerCap } from '../config/sections/answers.ts';
import { describeError } from '../errors.ts';
import { AnswerTooLargeError, readCapped } from '../kit/capped-body.ts';
import { loadSettings, parseArgs, SettingsError } from '../kit/settings.ts';
import { readRegularFile } from '../regular-file.ts';

export const DEFAULT_HUB = 'https://hub.spacestation14.com/';

/**
 * Where a server advertises itself, from its arguments and environment as the engine's `HubManager` reads them:
 * `hub.advertise`, `hub.server_url` ('' when unset: the engine guesses it and logs it), `hub.hub_urls` and
 * `hub.advertise_interval`; `problems` are settings that make advertising fail (a hub URL the engine would mangle).
 * Null when the server does not advertise; its config.toml, which it writes, must be a regular file.
 */
export async function hubSettingsOf(argv: readonly string[], env: NodeJS.ProcessEnv) {
  const { configFile } = parseArgs(argv);
  const configText =
    configFile === undefined
      ? null
      : await readRegularFile(configFile, 'utf8').catch((err: unknown) => {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
          throw new SettingsError(`cannot read config file ${configFile}: ${describeError(err)}`, { cause: err });
        });
  const s = loadSettings({ argv, env, configText });
  if (!s.bool('hub.advertise', false)) return null;
  const hubUrls = s
    .string('hub.hub_urls', DEFAULT_HUB)
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  // The engine appends `api/servers/advertise` to each entry as text: without the slash the request goes astray.
  const problems = hubUrls
    .filter((url) => !url.endsWith('/'))
    .map(
      (url) => `hub.hub_urls entry ${url} lacks its trailing slash: the engine posts to ${url}api/servers/advertise`,
    );
  const serverUrl = s.string('hub.server_url', '').trim();
  if (serverUrl !== '' && !/^ss14s?:\/\/[^/\s]+/.test(serverUrl))
    problems.push(`hub.server_url ${serverUrl} is not an ss14:// or ss14s:// address: hubs refuse it`);
  return { serverUrl, hubUrls, intervalSeconds: s.int('hub.advertise_interval', 120), problems };
}
type HubSettings = NonNullable<Awaited<ReturnType<typeof hubSettingsOf>>>;

export type Listing = 'listed' | 'missing';

/**
 * Whether a hub lists a server now: SS14.ServerHub's `api/servers/info?url=` answers its `/info` until 3 minutes after
 * its last advertise, else 404 (one small request, not the whole list). An error when the hub cannot say.
 */
export async function checkListing(
  hubUrl: string,
  address: string,
  opts: Pick<AnswerCap, 'timeoutMs' | 'maxBytes'> & { setting?: string },
): Promise<Listing> {
  // Built as the engine builds its advertise address: the hub URL as text, then the path.
  const url = `${hubUrl}api/servers/info?url=${encodeURIComponent(address)}`;
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const res = await fetch(url, { signal, headers: { Accept: 'application/json' } }).catch((err: unknown) => {
    const late = (err as Error | null)?.name === 'TimeoutError' ? `no answer within ${opts.timeoutMs / 1000} s` : '';
    throw new Error(`cannot reach the hub at ${url}: ${late || describeError(err)}`, { cause: err });
  });
  // Read to free the connection; a hub is any URL config.toml names: one answering too much counts as unreachable.
  await readCapped(res.body, opts.maxBytes, 'its answer', opts.setting).catch((err: unknown) => {
    const why = err instanceof AnswerTooLargeError ? err.message : `its answer was cut short (${describeError(err)})`;
    throw new Error(`the hub at ${url} answered HTTP ${res.status}, but ${why}`, { cause: err });
  });
  if (res.status === 200) return 'listed';
  if (res.status === 404) return 'missing';
  throw new Error(`the hub at ${url} answered HTTP ${res.status}`);
}

/* The engine's `hub` lines in a server's log, matched on the message whatever the prefix. */
const ADVERTISED = /Successfully advertised to (\S+) with address (\S+)/;
const GUESSED = /Guessed server address to be (\S+)/;
const REFUSED = /Error status while advertising server: \[([^\]]*)\] (.*), from (\S+)\s*$/;
const FAILED = /Exception while trying to advertise server to (\S+)/;

export function advertiseEventOf(line: string) {
  // Cheap test first: nearly every line is about something else.
  if (!line.includes('advertis') && !line.includes('Guessed server address')) return null;
  let m = REFUSED.exec(line);
  if (m) return { type: 'refused' as const, status: m[1] ?? '', text: (m[2] ?? '').slice(0, 300), hub: m[3] ?? '' };
  m = ADVERTISED.exec(line);
  if (m) return { type: 'advertised' as const, hub: m[1] ?? '', address: m[2] ?? '' };
  m = GUESSED.exec(line);
  if (m) return { type: 'guessed' as const, address: m[1] ?? '' };
  m = FAILED.exec(line);
  if (m) return { type: 'failed' as const, hub: m[1] ?? '' };
  return null;
}

/**
 * Whether the hubs list the server: `poll()` asks each, `line()` reads the engine's hub lines. An absence past
 * `missingAfterMs` (on `now`, the daemon's monotonic clock) first gets the re-advertise command (`hub_advertise_now`,
 * with a console), then is told once; an unreachable hub is no absence.
 */
export function createHubWatch(opts: {
  settings: HubSettings;
  missingAfterMs: number;
  now: () => number;
  check: (hub: string, address: string) => Promise<Listing>;
  readvertise?: () => Promise<void>;
  reports: {
    missing(hub: string, address: string, since: number, why: string | null): void;
    back(hub: string, address: string, missingMs: number): void;
    readvertised(hub: string): void;
  };
}) {
  let address = opts.settings.serverUrl;
  const hubs = new Map(opts.settings.hubUrls.map((hub) => [hub, fresh(hub)]));

  const pollOne = async (state: HubState): Promise<void> => {
    const listing = await opts.check(state.hub, address).catch((err: unknown) => {
      state.listing = 'unknown';
      state.lastError = describeError(err);
      return null;
    });
    if (listing === null) return;
    const now = opts.now();
    if (listing === 'listed') {
      if (state.told && state.missingSince !== null) opts.reports.back(state.hub, address, now - state.missingSince);
      Object.assign(state, fresh(state.hub), { listing, checkedAt: now });
      return;
    }
    state.listing = 'missing';
    state.checkedAt = now;
    state.missingSince ??= now;
    if (state.told || now - state.missingSince < opts.missingAfterMs) return;
    if (opts.readvertise && !state.readvertised) {
      state.readvertised = true;
      await opts.readvertise().catch((err: unknown) => {
        state.lastError = `the re-advertise command failed: ${describeError(err)}`;
      });
      opts.reports.readvertised(state.hub);
      return;
    }
    state.told = true;
    opts.reports.missing(state.hub, address, state.missingSince, state.lastError);
  };

  return {
    /** `hub.server_url`, or what the engine guessed and logged; '' until known. */
    address: () => address,

    states: (): HubState[] => [...hubs.values()].map((s) => ({ ...s })),

    /** A new launch: absences start over. */
    reset(): void {
      for (const hub of hubs.keys()) hubs.set(hub, fresh(hub));
    },

    line(text: string) {
      const event = advertiseEventOf(text);
      if (event === null) return null;
      if ((event.type === 'guessed' || event.type === 'advertised') && opts.settings.serverUrl === '')
        address = event.address;
      if (event.type === 'refused' || event.type === 'failed') {
        const state = hubs.get(event.hub);
        if (state)
          state.lastError =
            event.type === 'refused'
              ? `the hub refused the advertisement: [${event.status}] ${event.text}`
              : 'the server could not reach the hub (an exception in its log)';
      }
      return event;
    },

    async poll(): Promise<void> {
      if (address === '') return;
      for (const state of hubs.values()) await pollOne(state);
    },
  };
}

export type HubWatch = ReturnType<typeof createHubWatch>;

/** Times in ms on `now`; `lastError`: the hub unreachable, or the engine's refused advertise. */
const fresh = (hub: string) => ({
  hub,
  listing: 'unknown' as Listing | 'unknown',
  missingSince: null as number | null,
  lastError: null as string | null,
  readvertised: false,
  told: false,
  checkedAt: null as number | null,
});
type HubState = ReturnType<typeof fresh>;
