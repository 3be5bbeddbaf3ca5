import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import { createGameApi, type UpdateRequest } from '../kit/api.ts';
import { checkinOptionsFrom, startCheckins, type Checkins } from '../kit/checkin.ts';
import type { Settings } from '../kit/settings.ts';
import type { Logger } from '../log.ts';
import { readDemoConfig } from './config.ts';
import { infoOf, makePublicKey, statusOf } from './payloads.ts';
import { startPlayers } from './players.ts';
import { startRounds } from './rounds.ts';

export interface DemoServer {
  /** Leaves cleanly (check-ins, rounds, sockets), then calls `exit(code)`. Later calls are ignored. */
  stop(code: number, why: string): Promise<void>;
}

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
 * The demo game server: players over UDP, rounds, the kit's HTTP API and check-ins. `exit` ends the
 * process (injected so the composition root owns `process.exit`).
 */
export async function startDemoServer(
  settings: Settings,
  log: Logger,
  exit: (code: number) => void,
): Promise<DemoServer> {
  for (const warning of settings.warnings) log.warn(warning);
  const config = readDemoConfig(settings, log);
  const publicKey = makePublicKey();
  let updatePending: UpdateRequest | undefined;
  let stopping = false;
  let http: Server | undefined;
  let checkins: Checkins | undefined;
  let crashTimer: NodeJS.Timeout | undefined;

  // Assigned below; the callbacks that use it only run once everything has started.
  let stop: DemoServer['stop'] = async () => {};

  const players = await startPlayers({
    host: config.udpHost,
    port: config.port,
    timeoutSeconds: config.playerTimeoutSeconds,
    log,
    onChange: (count) => {
      if (count === 0 && updatePending) void stop(0, 'the last player left; restarting for the update');
    },
  });
  log.info(`game listening on udp://${config.udpHost}:${config.port}`);

  const rounds = await startRounds({
    lengthSeconds: config.roundSeconds,
    dataDir: settings.dataDir,
    log,
    players: () => players.count(),
    onRoundEnd: () => {
      if (!updatePending) return true;
      void stop(0, 'round over; restarting for the update');
      return false;
    },
  });

  stop = async (code, why) => {
    if (stopping) return;
    stopping = true;
    log.info(`stopping: ${why}`, { code });
    clearTimeout(crashTimer);
    await checkins?.stop();
    await rounds.stop();
    await players.close();
    await closeHttp(http);
    log.info('stopped', { code });
    exit(code);
  };

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
        const empty = players.count() === 0;
        const announcement = `the server restarts for an update ${empty ? 'now' : `at the end of round ${rounds.current().id}`}`;
        // Players hear it over the game socket; the log line is for whoever runs the server.
        const told = players.broadcast(announcement);
        if (empty) {
          setTimeout(() => void stop(0, 'no players; restarting for the update now'), 20);
        } else {
          log.info(`announcement: ${announcement}`, { players: told });
        }
      },
    });
    http = await listen(app, config.statusHost, config.statusPort);
    log.info(`status api listening on http://${config.statusHost}:${config.statusPort}`);
  } else {
    log.info('status api disabled (status.enabled=false)');
  }

  checkins = startCheckins({ ...checkinOptionsFrom(settings), userAgent: 'demo-server', log });

  if (config.crashAfterSeconds !== undefined) {
    crashTimer = setTimeout(() => {
      log.error(`crashing on purpose (demo.crash_after=${config.crashAfterSeconds})`);
      exit(3);
    }, config.crashAfterSeconds * 1000);
  }
  log.info('demo server ready', {
    name: config.hostname,
    port: config.port,
    roundSeconds: config.roundSeconds,
    startupMs: Math.round(process.uptime() * 1000),
  });
  return { stop: (code, why) => stop(code, why) };
}
