import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { serve } from '@hono/node-server';
import { type AgonesMode, agonesOptionsFrom, startAgonesMode } from '../kit/agones/mode.ts';
import { createGameApi, type UpdateRequest } from '../kit/api.ts';
import { type Checkins, checkinOptionsFrom, startCheckins } from '../kit/checkin.ts';
import type { Info, Status } from '../kit/schemas.ts';
import type { Settings } from '../kit/settings.ts';
import type { Logger } from '../log.ts';
import { type DemoConfig, readDemoConfig } from './config.ts';
import { type Players, startPlayers } from './players.ts';
import { type Round, startRounds } from './rounds.ts';

/**
 * The server's public key for `auth.public_key`: a fresh X25519 key (the curve of the sealed-box scheme launchers use
 * it with) in standard base64. The demo authenticates nobody; the key is there so launchers see a real one.
 */
function makePublicKey(): string {
  const { publicKey } = generateKeyPairSync('x25519');
  const x = publicKey.export({ format: 'jwk' }).x ?? '';
  return Buffer.from(x, 'base64url').toString('base64');
}

/** `/status`: the engine's fields plus what a round-based game adds (as space-station-14's `GameTicker.StatusShell.cs`). */
function statusOf(config: DemoConfig, players: number, round: Round): Status {
  return {
    name: config.hostname,
    players,
    soft_max_players: config.softMaxPlayers,
    tags: config.tags,
    round_id: round.id,
    run_level: 1, // in round: rounds follow each other with no lobby
    round_start_time: round.startedAt.toISOString(),
  };
}

const orNull = (s: string) => (s === '' ? null : s);

/** `/info` in the engine's shape (`StatusHost.Handlers.cs`); `privacy_policy` only when all three of its cvars are set. */
function infoOf(config: DemoConfig, publicKey: string): Info {
  const b = config.build;
  return {
    connect_address: config.connectAddress,
    auth: { mode: config.authMode, public_key: publicKey },
    build: {
      engine_version: b.engineVersion,
      fork_id: b.forkId,
      version: b.version,
      download_url: b.downloadUrl,
      hash: orNull(b.hash),
      acz: false,
      manifest_download_url: orNull(b.manifestDownloadUrl),
      manifest_url: orNull(b.manifestUrl),
      manifest_hash: orNull(b.manifestHash),
    },
    desc: config.desc,
    links: config.links,
    ...(config.privacyPolicy ? { privacy_policy: config.privacyPolicy } : {}),
  };
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

/** The demo game server: UDP players, rounds, and the kit's HTTP API, check-ins and Agones mode. */
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
   * Leaves cleanly (check-ins, rounds, sockets, Agones), then `exit(code)`; later calls are ignored. `tellAgones`
   * false: someone else ends the server (a signal), so no `/shutdown`. Assigned below, before any caller runs.
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
    const server = serve({ fetch: app.fetch, hostname: config.statusHost, port: config.statusPort }) as Server;
    await once(server, 'listening');
    http = server;
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

/** One command per line on standard input, as the engine reads it; each answer is a log line `watchdog console` shows. */
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
