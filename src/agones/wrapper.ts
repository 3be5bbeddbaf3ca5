import { type Bus, type BusEvents, subscribe } from '../bus.ts';
import type { AgonesConfig } from '../config/sections/agones.ts';
import { type AnswersSettings, answerCap } from '../config/sections/answers.ts';
import { callReady, callShutdown, followGameServer, startHealthPings } from '../kit/agones/pinger.ts';
import { startPlayerReports } from '../kit/agones/players.ts';
import { AgonesSdk } from '../kit/agones/sdk.ts';
import type { Logger } from '../log.ts';
import { readPlayers } from '../process/server-api.ts';
import type { AgonesStatus } from '../supervisor/status.ts';

/**
 * States in which the server is wanted and on its way: starting, running, being relaunched, being updated or rolled
 * back. Health pings go on through all of them, so a quick crash and relaunch in the pod does not get the GameServer
 * marked Unhealthy; the back-off budget (`crashLoopLimit`) is counted apart.
 */
const alive = (state: string) => !state.startsWith('stopped') && state !== 'exited';
const serving = (state: string) => state === 'server.running' || state === 'server.awaiting-checkin';

/**
 * The watchdog as the Agones wrapper of an engine server that knows nothing of Agones: `/ready` at the server's
 * first check-in, `/health` on its own interval while the instance is alive, the player count (the server's
 * `GET /status`) as the label and Counter `players`, and `/shutdown` once the instance is stopped for good (it gave
 * up, or someone stopped it): in a pod, a server that is not coming back is a GameServer to replace.
 */
export function startAgonesWrapper(opts: {
  config: AgonesConfig;
  /**
   * The one instance the daemon wraps: its key, ApiPort and the `Answers` caps in force (for its player count), state
   * and crash streak now.
   */
  instance: {
    key: string;
    apiPort: number;
    answers: () => AnswersSettings;
    state: () => string;
    crashStreak: () => number;
  };
  bus: Bus;
  log: Logger;
  /** The client to use; default one on 127.0.0.1 at `config.port`. */
  sdk?: AgonesSdk;
}) {
  const { config, instance, bus, log } = opts;
  const sdk = opts.sdk ?? new AgonesSdk({ port: config.port });
  const stopping = new AbortController();
  const signal = stopping.signal;
  const healthMs = config.healthSeconds * 1000;
  let state = instance.state();
  let wasAlive = alive(state);
  let players = 0;
  let readyCall: Promise<void> | undefined;
  let ready = false;
  let shutdownCall: Promise<void> | undefined;
  let gameServer: string | null = null;
  let gsState: string | null = null;
  let looping = false;
  /**
   * A server that keeps crashing after check-ins is never given up on by the daemon, but in a pod it is a GameServer
   * to replace: at `crashLoopLimit` crashes in one loop the pings stop and Agones marks it Unhealthy. Read at each
   * tick, since a stable run ends the loop without a state change: the pings resume if Agones has not acted yet.
   */
  const withinBudget = () => {
    const streak = instance.crashStreak();
    const over = streak >= config.crashLoopLimit;
    if (over && !looping)
      log.warn(
        `the server crashed ${streak} times in a row after checking in; no more Agones health pings, so Agones ` +
          'marks the GameServer Unhealthy and replaces it (they resume after a stable run)',
        { crashLoopLimit: config.crashLoopLimit },
      );
    else if (!over && looping) log.info('the crash loop is over (a stable run); Agones health pings resume');
    looping = over;
    return !over;
  };
  const reports = startPlayerReports({ sdk, players: () => players, log, signal });
  const pings = startHealthPings({
    sdk,
    intervalMs: healthMs,
    signal,
    log,
    wanted: () => !shutdownCall && alive(state) && withinBudget(),
  });

  const readPlayerCount = async () => {
    if (!ready || shutdownCall || !serving(state) || signal.aborted) return;
    const cap = answerCap(instance.answers(), 'Server');
    const count = await readPlayers(instance.apiPort, {
      ...cap,
      timeoutMs: Math.min(cap.timeoutMs, config.playersSeconds * 1000),
    });
    if (count === null || signal.aborted) return;
    players = count;
    reports.tick();
  };
  const playersTimer = setInterval(() => void readPlayerCount(), config.playersSeconds * 1000);

  const shutdown = (why: string): Promise<void> => {
    // The daemon's exit waits for it (`stop`), within its bound.
    shutdownCall ??= callShutdown(sdk, signal, log, { why, state: gsState, maxElapsedMs: 10_000 });
    return shutdownCall;
  };

  const onState = (e: BusEvents['instance:state']) => {
    if (e.key !== instance.key) return;
    state = e.state;
    if (alive(state)) wasAlive = true;
    // stopped.idle before the first launch is the daemon starting; after a life it is a stop (asked for, mostly).
    if (state === 'stopped.failing') void shutdown('the server kept failing to start, and the watchdog gave up');
    else if (state === 'stopped.idle' && wasAlive) void shutdown('the server was stopped and stays stopped');
  };
  const onCheckin = (e: BusEvents['instance:checkin']) => {
    if (e.key !== instance.key || readyCall || shutdownCall) return;
    // Once only: Ready again after a relaunch would move an Allocated GameServer back to Ready.
    readyCall = callReady(sdk, signal, log, async () => {
      ready = true;
      await readPlayerCount();
      reports.tick(true);
    });
  };
  const unsubscribe = subscribe(bus, { 'instance:state': onState, 'instance:checkin': onCheckin });

  const watching = followGameServer(sdk, signal, log, (gs) => {
    gameServer = gs.object_meta?.name ?? gameServer;
    gsState = gs.status?.state ?? null;
  });
  log.info(`Agones mode: wrapping instance ${instance.key}; the SDK server is at ${sdk.baseUrl}`, {
    healthEverySeconds: config.healthSeconds,
    crashLoopLimit: config.crashLoopLimit,
  });

  const stop = async () => {
    if (signal.aborted) return;
    unsubscribe();
    pings.stop();
    clearInterval(playersTimer);
    // A /shutdown under way is let finish (it is bounded) before the calls are cancelled.
    await shutdownCall;
    stopping.abort(new Error('Agones wrapper stopped'));
    await Promise.allSettled([watching, readyCall, reports.idle(), pings.idle()]);
  };

  return {
    status: (): AgonesStatus => ({ gameServer, state: gsState, ready }),
    /**
     * Stops pings, player reports, the watch and every call still waiting for the SDK server; a `/shutdown` under
     * way is let finish first. No `/shutdown` of its own: the daemon stops on a signal, and in a pod a SIGTERM means
     * the pod is already being deleted (docs/agones.md).
     */
    stop,
  };
}

export type AgonesWrapper = ReturnType<typeof startAgonesWrapper>;
