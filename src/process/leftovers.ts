import type { ResolvedConfig, ResolvedInstance } from '../config/resolved.ts';
import type { Logger } from '../log.ts';
import type { LaunchData, SpawningData } from '../store/instance-data.ts';
import { adoptedProcess } from './adopted-process.ts';
import { shutdownGracefully } from './graceful.ts';
import { TOKEN_ENV } from './launch-spec.ts';
import { findProcessByEnv, readProcessStartTime, verifyProcess } from './proc-info.ts';

export interface Leftover {
  record: LaunchData;
  /** Graceful shutdown with its recorded secret, for PersistServers: false. */
  shutDown(config: ResolvedConfig, instance: ResolvedInstance): Promise<void>;
}

/**
 * Looks up the server recorded in data.json. A pid is only trusted when its start time and command line match
 * the launch record: after a reboot or a long time, the pid may belong to an unrelated process, which we must
 * neither adopt nor kill.
 */
export async function findLeftover(record: LaunchData | null, log: Logger): Promise<Leftover | null> {
  if (!record) return null;
  const verified = await verifyProcess(record.pid, {
    startTime: record.startTime,
    args: [record.program, ...record.args],
  });
  if (!verified) {
    log.info('the server recorded in data.json is gone (or its pid was reused); nothing to adopt', { pid: record.pid });
    return null;
  }
  return {
    record,
    async shutDown(config, instance) {
      const proc = adoptedProcess(record.pid, record.startTime, 100);
      const how = await shutdownGracefully(proc, {
        apiPort: instance.settings.ApiPort,
        secret: record.secret,
        reason: 'Watchdog restarted',
        requestMs: config.timing.ShutdownRequestSeconds * 1000,
        exitMs: config.timing.ShutdownExitSeconds * 1000,
        maxAnswerBytes: config.settings.Answers.ServerMaxKilobytes * 1000,
        log,
      });
      log.info(
        how === 'exited' ? 'the leftover server exited after the shutdown request' : 'the leftover server was killed',
        { pid: record.pid },
      );
    },
  };
}

/**
 * The `watchdog.baseUrl` the recorded server was launched with (where it checks in), or null if not found.
 * The last one wins, as in the engine: `Arguments` may override the watchdog's own.
 */
export function recordedBaseUrl(record: LaunchData): string | null {
  const prefix = 'watchdog.baseUrl=';
  const found = record.args.findLast((arg, i) => record.args[i - 1] === '--cvar' && arg.startsWith(prefix));
  return found?.slice(prefix.length) ?? null;
}

/**
 * The server of a launch the previous daemon was spawning when it died (data.json `spawning`, written before the
 * spawn), as a launch record: found by its command line and the launch's secret in its environment. Null when
 * there was no such launch, or its spawn never happened or the server is gone.
 */
export async function findSpawned(spawning: SpawningData | null, log: Logger): Promise<LaunchData | null> {
  if (!spawning) return null;
  const pid = await findProcessByEnv([spawning.program, ...spawning.args], TOKEN_ENV, spawning.secret);
  const startTime = pid === null ? null : await readProcessStartTime(pid);
  if (pid === null || startTime === null) return null;
  log.warn('found a server the previous daemon launched but had not recorded yet', { pid });
  return { ...spawning, pid, startTime };
}
