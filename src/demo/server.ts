import type { Server } from 'node:http';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { serve } from '@hono/node-server';
import { type AgonesMode, agonesOptionsFrom, startAgonesMode } from '../kit/agones/mode.ts';
import { createGameApi, type UpdateRequest } from '../kit/api.ts';
import { type Checkins, checkinOptionsFrom, startCheckins } from '../kit/checkin.ts';
import type { Settings } from '../kit/settings.ts';
import type { Logger } from '../log.ts';
import { readDemoConfig } from './config.ts';
import { infoOf, makePublicKey, statusOf } from './payloads.ts';
import { type Players, startPlayers } from './players.ts';
import { type Round, startRounds } from './rounds.ts';

function listen(
  app: { fetch: (req: Request) => Response | Promise<Response> },
  host: string,
  port: number,
): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port }, () => {
      server.off('error', reject);
      resolve(server as Server);
    });
    server.once('error', reject);
  });
}

function closeHttp(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    // close() stops accepting and drops idle keep-alive sockets; anything still open after a moment is cut.
    const force = setTimeout(() => server.closeAllConnections(), 500);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * The demo game server: players over UDP, rounds, the kit's HTTP API, check-ins and (with `AGONES_SDK_HTTP_PORT`
 * in `env`, or `agones.enabled`) the kit's Agones mode. `exit` ends the process (injected so the composition root
 * owns `process.exit`).
 */
export async function startDemoServer(
  settings: Settings,
  log: Logger,
  exit: (code: number) => void,
  env: NodeJS.ProcessEnv = process.env,
) {
  for (const warning of settings.warnings) log.warn(warning);
  const config = readDemoConfig(settings, log);
  const publicKey = makePublicKey();
  let updatePending: UpdateRequest | undefined;
  /** Why the server leaves at the next round end (or once nobody plays), when it does. */
  let leaving: string | undefined;
  let agones: AgonesMode | undefined;
  let stopping = false;
  let http: Server | undefined;
  let checkins: Checkins | undefined;
  let crashTimer: NodeJS.Timeout | undefined;
  let throwTimer: NodeJS.Timeout | undefined;

  /**
   * Leaves cleanly (check-ins, rounds, sockets, Agones), then calls `exit(code)`; later calls are ignored.
   * `tellAgones`: whether to ask Agones to end the GameServer (`/shutdown`) first; default true, as for every exit
   * the server decides on. A signal is someone else ending the server (Agones itself, when it deletes the pod).
   * Assigned below; the callbacks that use it only run once everything has started.
   */
  let stop: (code: number, why: string, opts?: { tellAgones?: boolean }) => Promise<void> = async () => {};

  const players = await startPlayers({
    host: config.udpHost,
    port: config.port,
    timeoutSeconds: config.playerTimeoutSeconds,
    log,
    onChange: (count) => {
      agones?.playersChanged();
      if (count === 0 && leaving) void stop(0, `the last player left; ${leaving}`);
    },
  });
  log.info(`game listening on udp://${config.udpHost}:${config.port}`);

  const rounds = await startRounds({
    lengthSeconds: config.roundSeconds,
    dataDir: settings.dataDir,
    log,
    players: () => players.count(),
    onRoundEnd: () => {
      if (!leaving) return true;
      void stop(0, `round over; ${leaving}`);
      return false;
    },
  });

  stop = async (code, why, opts = {}) => {
    if (stopping) return;
    stopping = true;
    log.info(`stopping: ${why}`, { code });
    clearTimeout(crashTimer);
    clearTimeout(throwTimer);
    await checkins?.stop();
    await rounds.stop();
    await players.close();
    await closeHttp(http);
    // Last, once no player is served any more: Agones deletes the pod soon after it hears of it.
    if (opts.tellAgones === false) await agones?.stop();
    else await agones?.shutdown(why);
    log.info('stopped', { code });
    exit(code);
  };

  /** Leaves at the end of this round, or now when nobody plays; players hear `announcement`. */
  const leaveAtRoundEnd = (why: string, announcement: (now: boolean) => string) => {
    leaving ??= why;
    const empty = players.count() === 0;
    const text = announcement(empty);
    // Players hear it over the game socket; the log line is for whoever runs the server.
    const told = players.broadcast(text);
    if (empty) setTimeout(() => void stop(0, `no players; ${why} now`), 20);
    else log.info(`announcement: ${text}`, { players: told });
  };

  agones = startAgonesMode({
    ...agonesOptionsFrom(settings, env),
    players: () => players.count(),
    onShutdownState: () =>
      leaveAtRoundEnd('leaving as the GameServer shuts down', (now) =>
        now ? 'the server shuts down now' : `the server shuts down at the end of round ${rounds.current().id}`,
      ),
    log: log.child('agones'),
  });

  if (config.statusEnabled) {
    const app = createGameApi({
      status: () => statusOf(config, players.count(), rounds.current()),
      info: () => infoOf(config, publicKey),
      watchdogToken: () => settings.string('watchdog.token'),
      log,
      onShutdown: ({ reason }) => {
        log.info(`${reason ?? 'Shutdown requested'}, shutting down...`);
        if (config.ignoreShutdown) {
          log.warn('ignoring the shutdown request (demo.ignore_shutdown=true)');
          return;
        }
        // After the 200 has gone out.
        setTimeout(() => void stop(0, `shutdown requested: ${reason ?? 'no reason given'}`), 20);
      },
      onUpdate: ({ reason, message }) => {
        const already = updatePending !== undefined;
        updatePending = { reason, message };
        log.info(`update received (${reason})${message ? `: ${message}` : ''}`, { alreadyPending: already });
        leaveAtRoundEnd(
          'restarting for the update',
          (now) => `the server restarts for an update ${now ? 'now' : `at the end of round ${rounds.current().id}`}`,
        );
      },
    });
    http = await listen(app, config.statusHost, config.statusPort);
    log.info(`status api listening on http://${config.statusHost}:${config.statusPort}`);
  } else {
    log.info('status api disabled (status.enabled=false)');
  }

  // The game takes players once it answers /status (or, without the HTTP API, once its socket is up).
  void agones.ready();
  checkins = startCheckins({ ...checkinOptionsFrom(settings), userAgent: 'demo-server', log });

  if (config.crashAfterSeconds !== undefined) {
    crashTimer = setTimeout(() => {
      log.error(`crashing on purpose (demo.crash_after=${config.crashAfterSeconds})`);
      exit(3);
    }, config.crashAfterSeconds * 1000);
  }
  if (config.throwAfterSeconds !== undefined) {
    const seconds = config.throwAfterSeconds;
    throwTimer = setTimeout(() => {
      throw new Error(`thrown on purpose (demo.throw_after=${seconds})`);
    }, seconds * 1000);
  }
  log.info('demo server ready', {
    name: config.hostname,
    port: config.port,
    roundSeconds: config.roundSeconds,
    startupMs: Math.round(process.uptime() * 1000),
  });
  return {
    stop: (...args: Parameters<typeof stop>) => stop(...args),
    /** Answers console commands read from `input` (the entry point gives it standard input). */
    readConsole: (input: Readable) => startDemoConsole({ input, log, players, round: () => rounds.current() }),
  };
}

export type DemoServer = Awaited<ReturnType<typeof startDemoServer>>;

const HELP = 'commands: status, players, say <text>, help';

/**
 * The demo's console: one command per line on standard input, as the engine reads its console (the watchdog's
 * `Console: true` makes standard input a FIFO it writes to). Each answer is a log line, so it reaches the server log
 * that `watchdog console` prints back.
 */
function startDemoConsole(opts: { input: Readable; log: Logger; players: Players; round: () => Round }): void {
  const { log, players } = opts;
  const answer = (line: string): string => {
    const [command = '', ...rest] = line.trim().split(/\s+/);
    switch (command) {
      case 'status': {
        const round = opts.round();
        const seconds = Math.round((Date.now() - round.startedAt.getTime()) / 1000);
        return `${players.count()} player(s), round ${round.id} (${seconds} s in)`;
      }
      case 'players': {
        const names = players.list().map((p) => p.name);
        return names.length === 0 ? 'nobody is on' : names.join(', ');
      }
      case 'say': {
        const text = rest.join(' ');
        if (text === '') return 'say what? (say <text>)';
        return `told ${players.broadcast(text)} player(s)`;
      }
      case 'help':
        return HELP;
      default:
        return `unknown command: ${command} (${HELP})`;
    }
  };
  const lines = createInterface({ input: opts.input, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (line) => {
    if (line.trim() !== '') log.info(`console> ${line.trim()}: ${answer(line)}`);
  });
  // Standard input ending (no console: /dev/null) is no reason to stop serving.
  lines.on('error', () => undefined);
}
