import type { AnswerCap } from '../config/sections/answers.ts';
import { describeError } from '../errors.ts';
import { AnswerTooLargeError, readCapped } from '../kit/capped-body.ts';
import { loadSettings, parseArgs, SettingsError } from '../kit/settings.ts';
import { readRegularFile } from '../regular-file.ts';

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

/**
 * The server's hub settings, or null when it does not advertise. Rejects on a config.toml that cannot be read: the
 * server writes that file, so it is read on the thread pool and must be a regular file (never a wait on a pipe).
 */
export async function hubSettingsOf(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<HubSettings | null> {
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

/**
 * Whether a hub lists a server now: `GET <hub>api/servers/info?url=<address>` of SS14.ServerHub answers the
 * server's `/info` while its advertisement has not expired (3 minutes after its last advertise) and 404 otherwise.
 * One small request per hub, instead of the whole `GET api/servers` list (hundreds of servers).
 */
export type Listing = 'listed' | 'missing';

export class HubUnreachableError extends Error {
  override name = 'HubUnreachableError';
}

/** The listing address, built as the engine builds its advertise address: the hub URL as text, then the path. */
export const infoUrl = (hubUrl: string, address: string): string =>
  `${hubUrl}api/servers/info?url=${encodeURIComponent(address)}`;

/**
 * Asks the hub, within `opts.timeoutMs` and reading at most `opts.maxBytes` of its answer (`Answers.HubMaxKilobytes`:
 * by default 64 kB, six times the largest /info SS14.ServerHub stores).
 */
export async function checkListing(
  hubUrl: string,
  address: string,
  opts: Pick<AnswerCap, 'timeoutMs' | 'maxBytes'> & { setting?: string; signal?: AbortSignal },
): Promise<Listing> {
  const url = infoUrl(hubUrl, address);
  const signal = opts.signal
    ? AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)])
    : AbortSignal.timeout(opts.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { signal, headers: { Accept: 'application/json' } });
  } catch (err) {
    const late = (err as Error | null)?.name === 'TimeoutError' ? `no answer within ${opts.timeoutMs / 1000} s` : '';
    throw new HubUnreachableError(`cannot reach the hub at ${url}: ${late || describeError(err)}`, { cause: err });
  }
  // Read to free the connection; SS14.ServerHub keeps a server's /info under 10 kB. A hub is any URL the server's
  // config.toml names: one answering more (without end, say) is cut off there and counts as unreachable.
  try {
    await readCapped(res.body, opts.maxBytes, 'its answer', opts.setting);
  } catch (err) {
    const why = err instanceof AnswerTooLargeError ? err.message : `its answer was cut short (${describeError(err)})`;
    throw new HubUnreachableError(`the hub at ${url} answered HTTP ${res.status}, but ${why}`, { cause: err });
  }
  if (res.status === 200) return 'listed';
  if (res.status === 404) return 'missing';
  throw new HubUnreachableError(`the hub at ${url} answered HTTP ${res.status}`);
}

/**
 * The engine's hub lines in a server's log (RobustToolbox `HubManager`, sawmill `hub`): what the daemon learns of
 * advertising without asking a hub. Matched on the message, whatever the log prefix ([INFO] hub: …).
 */
export type AdvertiseEvent =
  | { type: 'advertised'; hub: string; address: string }
  | { type: 'guessed'; address: string }
  | { type: 'refused'; hub: string; status: string; text: string }
  | { type: 'failed'; hub: string };

const ADVERTISED = /Successfully advertised to (\S+) with address (\S+)/;
const GUESSED = /Guessed server address to be (\S+)/;
const REFUSED = /Error status while advertising server: \[([^\]]*)\] (.*), from (\S+)\s*$/;
const FAILED = /Exception while trying to advertise server to (\S+)/;

export function advertiseEventOf(line: string): AdvertiseEvent | null {
  // Cheap test first: nearly every line is about something else.
  if (!line.includes('advertis') && !line.includes('Guessed server address')) return null;
  let m = REFUSED.exec(line);
  if (m) return { type: 'refused', status: m[1] ?? '', text: (m[2] ?? '').slice(0, 300), hub: m[3] ?? '' };
  m = ADVERTISED.exec(line);
  if (m) return { type: 'advertised', hub: m[1] ?? '', address: m[2] ?? '' };
  m = GUESSED.exec(line);
  if (m) return { type: 'guessed', address: m[1] ?? '' };
  m = FAILED.exec(line);
  if (m) return { type: 'failed', hub: m[1] ?? '' };
  return null;
}

/** One hub as the watch last saw it. */
export interface HubState {
  hub: string;
  listing: Listing | 'unknown';
  /** Since when (ms on `now`) it has not listed the server; null while listed or unknown. */
  missingSince: number | null;
  /** The last thing that went wrong: the hub unreachable, or the engine's refused advertise (status and text). */
  lastError: string | null;
  /** The re-advertise command was sent for this absence. */
  readvertised: boolean;
  /** The absence was told (once). */
  told: boolean;
  /** When the hub last answered (ms on `now`); null before it has. */
  checkedAt: number | null;
}

export interface HubReports {
  /** Missing for longer than the limit (after a re-advertise, when there is a console): once per absence. */
  missing(hub: string, address: string, since: number, why: string | null): void;
  /** Listed again after an absence that was told. */
  back(hub: string, address: string, missingMs: number): void;
  readvertised(hub: string): void;
}

export interface HubWatchOptions {
  settings: HubSettings;
  missingAfterMs: number;
  /** The clock absences are measured on: the daemon's monotonic one. */
  now: () => number;
  check: (hub: string, address: string) => Promise<Listing>;
  /** Sends the engine's `hub_advertise_now` through the console; absent when the console is off. */
  readvertise?: () => Promise<void>;
  reports: HubReports;
}

/**
 * Watches whether the hubs a server advertises to list it: `poll()` asks each hub (a timer the daemon owns calls
 * it while the server runs), `line()` reads the engine's hub lines from its log. An absence longer than
 * `missingAfterMs` first gets the engine's re-advertise command (with a console), then, still missing at the next
 * poll, is told once; a hub that cannot be reached is not an absence (the hub is down, not the server).
 */
export function createHubWatch(opts: HubWatchOptions) {
  let address = opts.settings.serverUrl;
  const hubs = new Map(opts.settings.hubUrls.map((hub) => [hub, fresh(hub)]));

  const pollOne = async (state: HubState): Promise<void> => {
    let listing: Listing;
    try {
      listing = await opts.check(state.hub, address);
    } catch (err) {
      state.listing = 'unknown';
      state.lastError = describeError(err);
      return;
    }
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
    /** The address checked: `hub.server_url`, or what the engine guessed and logged; '' until known. */
    address: () => address,

    states: (): HubState[] => [...hubs.values()].map((s) => ({ ...s })),

    /** A new launch: absences start over (a server needs its first advertise interval before a hub lists it). */
    reset(): void {
      for (const hub of hubs.keys()) hubs.set(hub, fresh(hub));
    },

    line(text: string): AdvertiseEvent | null {
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

const fresh = (hub: string): HubState => ({
  hub,
  listing: 'unknown',
  missingSince: null,
  lastError: null,
  readvertised: false,
  told: false,
  checkedAt: null,
});
