import { createLogger, type Logger } from '../../log.ts';
import type { Settings } from '../settings.ts';
import { callReady, callShutdown, followGameServer, startHealthPings } from './pinger.ts';
import { startPlayerReports } from './players.ts';
import { AgonesSdk, type AgonesSdkOptions, agonesPortFrom } from './sdk.ts';
import type { GameServer } from './wire.ts';

/** Agones' health window is 5 s × 3 by default; a ping every 2 s misses it only when two in a row are lost. */
export const DEFAULT_AGONES_HEALTH_SECONDS = 2;

export interface AgonesModeOptions {
  /** Default: on when `AGONES_SDK_HTTP_PORT` is set in `env`. */
  enabled?: boolean;
  env?: NodeJS.ProcessEnv;
  /** Default: one built from `sdkOptions`. */
  sdk?: AgonesSdk;
  sdkOptions?: AgonesSdkOptions;
  healthIntervalSeconds?: number;
  /** Reported as the label and the Counter `players`. */
  players: () => number;
  /** The GameServer moved to `Shutdown` (deleted, say): leave at a convenient moment. */
  onShutdownState?: (gs: GameServer) => void;
  log?: Logger;
}

export interface AgonesMode {
  readonly enabled: boolean;
  /** The GameServer state last seen. */
  readonly state: string | undefined;
  /** Marks the server Ready (once, retried until answered), then reports the players. */
  ready(): Promise<void>;
  /** Reports a changed player count now rather than at the next health ping. */
  playersChanged(): void;
  /** Leaving on its own: `/shutdown` (unless already `Shutdown`), then `stop()`. */
  shutdown(why: string): Promise<void>;
  /** Stops pings, the watch and any call still waiting for the SDK server. */
  stop(): Promise<void>;
}

/** From the cvars `agones.enabled` (unset: by the environment) and `agones.health_interval`. */
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
 * Health pings from now on, `/ready` when the game says so, the player count, the GameServer watched for `Shutdown`,
 * `/shutdown` when the server leaves. Failures are logged, never thrown; a late SDK server is waited for.
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
  /** Before /ready the GameServer takes nobody: no players to report. */
  let isReady = false;
  let shutdownNoticed = false;
  const playersChanged = () => {
    if (isReady) players.tick();
  };
  const pings = startHealthPings({ sdk, intervalMs, signal, log, after: playersChanged });

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
    playersChanged,
    async shutdown(why) {
      if (signal.aborted) return;
      await callShutdown(sdk, signal, log, { why, state, maxElapsedMs: 5_000 });
      await stop();
    },
    stop,
  };
}
