import { createLogger, type Logger } from '../../log.ts';
import type { Settings } from '../settings.ts';
import { callReady, callShutdown, followGameServer, startHealthPings } from './pinger.ts';
import { startPlayerReports } from './players.ts';
import { AgonesSdk, type AgonesSdkOptions, agonesPortFrom } from './sdk.ts';
import type { GameServer } from './wire.ts';

/** Agones' health window is 5 s × 3 by default; a ping every 2 s misses it only when two in a row are lost. */
export const DEFAULT_AGONES_HEALTH_SECONDS = 2;

export interface AgonesModeOptions {
  /** On or off; default: on when `AGONES_SDK_HTTP_PORT` is set in `env`. */
  enabled?: boolean;
  env?: NodeJS.ProcessEnv;
  /** The client to use; default one built from `sdkOptions` (port from `AGONES_SDK_HTTP_PORT`, else 9358). */
  sdk?: AgonesSdk;
  sdkOptions?: AgonesSdkOptions;
  /** Seconds between `/health` pings (fractions allowed). */
  healthIntervalSeconds?: number;
  /** The player count, reported as the label `players` and the Counter `players`. */
  players: () => number;
  /** The GameServer moved to `Shutdown` (deleted, or shut down by someone else): leave at a convenient moment. */
  onShutdownState?: (gs: GameServer) => void;
  log?: Logger;
}

export interface AgonesMode {
  readonly enabled: boolean;
  /** The GameServer state last seen on the watch, if any. */
  readonly state: string | undefined;
  /** Marks the server Ready (once; retried until the SDK server answers or `stop`), then reports the players. */
  ready(): Promise<void>;
  /** The player count changed: report it now rather than at the next health ping. */
  playersChanged(): void;
  /** The server is leaving on its own: `/shutdown` (unless the GameServer is already `Shutdown`), then `stop()`. */
  shutdown(why: string): Promise<void>;
  /** Stops pings, the watch and any call still waiting for the SDK server. */
  stop(): Promise<void>;
}

/** Agones options from the cvars: `agones.enabled` (unset: by the environment) and `agones.health_interval`. */
export function agonesOptionsFrom(
  settings: Settings,
  env: NodeJS.ProcessEnv,
): Pick<AgonesModeOptions, 'enabled' | 'env' | 'healthIntervalSeconds'> {
  const raw = settings.string('agones.enabled').trim();
  return {
    enabled: raw === '' ? undefined : settings.bool('agones.enabled', false),
    env,
    healthIntervalSeconds: settings.float('agones.health_interval', DEFAULT_AGONES_HEALTH_SECONDS),
  };
}

const DISABLED: AgonesMode = {
  enabled: false,
  state: undefined,
  ready: async () => {},
  playersChanged: () => {},
  shutdown: async () => {},
  stop: async () => {},
};

/**
 * The kit's Agones mode: health pings from now on, `/ready` when the game says so, the player count as label and
 * Counter, the GameServer watched for `Shutdown`, and `/shutdown` when the server leaves on its own. Nothing is
 * thrown: failures are logged, and the SDK server is waited for while it is not up yet.
 *
 * @example
 * const agones = startAgonesMode({ ...agonesOptionsFrom(settings, process.env), players: () => count, onShutdownState: leaveAtRoundEnd, log });
 * await listen(app); void agones.ready();
 * // leaving on its own: await agones.shutdown('round over'); process.exit(0);
 */
export function startAgonesMode(opts: AgonesModeOptions): AgonesMode {
  const env = opts.env ?? process.env;
  const enabled = opts.enabled ?? agonesPortFrom(env) !== undefined;
  if (!enabled) return DISABLED;
  const log = opts.log ?? createLogger('kit:agones');
  const sdk = opts.sdk ?? new AgonesSdk({ env, ...opts.sdkOptions });
  const stopping = new AbortController();
  const signal = stopping.signal;
  const intervalMs = Math.max(50, (opts.healthIntervalSeconds ?? DEFAULT_AGONES_HEALTH_SECONDS) * 1000);
  const players = startPlayerReports({ sdk, players: opts.players, log, signal });
  let state: string | undefined;
  let readyCall: Promise<void> | undefined;
  /** Players are reported once Agones has heard /ready: before, the GameServer takes nobody anyway. */
  let isReady = false;
  let shutdownNoticed = false;

  const pings = startHealthPings({
    sdk,
    intervalMs,
    signal,
    log,
    after: () => {
      if (isReady) players.tick();
    },
  });

  const watching = followGameServer(sdk, signal, log, (gs) => {
    state = gs.status?.state;
    if (state === 'Shutdown' && !shutdownNoticed) {
      shutdownNoticed = true;
      opts.onShutdownState?.(gs);
    }
  });

  log.info('Agones mode: the SDK server is at ' + sdk.baseUrl, { healthEverySeconds: intervalMs / 1000 });

  const stop = async () => {
    if (signal.aborted) return;
    stopping.abort(new Error('Agones mode stopped'));
    pings.stop();
    await Promise.allSettled([watching, readyCall, pings.idle(), players.idle()]);
  };

  return {
    enabled: true,
    get state() {
      return state;
    },
    ready() {
      readyCall ??= callReady(sdk, signal, log, () => {
        isReady = true;
        players.tick(true);
      });
      return readyCall;
    },
    playersChanged: () => {
      if (isReady) players.tick();
    },
    async shutdown(why) {
      if (signal.aborted) return;
      await callShutdown(sdk, signal, log, { why, state, maxElapsedMs: 5_000 });
      await stop();
    },
    stop,
  };
}
