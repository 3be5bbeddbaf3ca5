import { type Bus, type BusEvents, subscribe } from '../bus.ts';
import type { AgonesConfig } from '../config/sections/agones.ts';
import { type AnswersSettings, answerCap } from '../config/sections/answers.ts';
import { callReady, callShutdown, followGameServer, startHealthPings } from '../kit/agones/pinger.ts';
import { startPlayerReports } from '../kit/agones/players.ts';
import { AgonesSdk } from '../kit/agones/sdk.ts';
import type { Logger } from '../log.ts';
import { readPlayers } from '../process/server-api.ts';
import type { AgonesStatus } from '../supervisor/status.ts';

/** Pings go on through every state but stopped, so a quick relaunch does not mark the GameServer Unhealthy. */
const alive = (state: string) => !state.startsWith('stopped') && state !== 'exited';
const serving = (state: string) => state === 'server.running' || state === 'server.awaiting-checkin';

/**
 * The Agones wrapper of an engine server that knows nothing of Agones: `/ready` at its first check-in, `/health`
 * while alive, its player count, `/shutdown` once it is stopped for good (a GameServer to replace).
 */
export function startAgonesWrapper(opts: {
  config: AgonesConfig;
  instance: {
    key: string;
    apiPort: number;
    answers: () => AnswersSettings;
    state: () => string;
    crashStreak: () => number;
  };
  bus: Bus;
  log: Logger;
  sdk?: AgonesSdk;
}) {
  const { config, instance, bus, log } = opts;
  const sdk = opts.sdk ?? new AgonesSdk({ port: config.port });
  const stopping = new AbortController();
  const signal = stopping.signal;
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
   * The daemon never gives up on a server crashing after check-ins, but in a pod it is one to replace: at
   * `crashLoopLimit` the pings stop. Read at each tick: a stable run ends the loop without a state change.
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
    intervalMs: config.healthSeconds * 1000,
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
    shutdownCall ??= callShutdown(sdk, signal, log, { why, state: gsState, maxElapsedMs: 10_000 });
    return shutdownCall;
  };

  const onState = (e: BusEvents['instance:state']) => {
    if (e.key !== instance.key) return;
    state = e.state;
    if (alive(state)) wasAlive = true;
    // stopped.idle before the first launch is the daemon starting.
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

  return {
    status: (): AgonesStatus => ({ gameServer, state: gsState, ready }),
    /** Lets a `/shutdown` under way finish; none of its own, as a SIGTERM in a pod means it is being deleted. */
    async stop() {
      if (signal.aborted) return;
      unsubscribe();
      pings.stop();
      clearInterval(playersTimer);
      // A /shutdown under way is let finish (it is bounded) before the calls are cancelled.
      await shutdownCall;
      stopping.abort(new Error('Agones wrapper stopped'));
      await Promise.allSettled([watching, readyCall, reports.idle(), pings.idle()]);
    },
  };
}

export type AgonesWrapper = ReturnType<typeof startAgonesWrapper>;
