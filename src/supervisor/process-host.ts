import { join } from 'node:path';
import { describeError } from '../errors.ts';
import { dumpProcess } from '../process/dump.ts';
import { buildLaunchSpec, generateSecret, inheritedEnv } from '../process/launch-spec.ts';
import { spawnServer } from '../process/spawn.ts';
import { adoptedProcess } from './adopted-process.ts';
import { logRetryMs, serverLogHealth, serverLogRotation } from './log-health.ts';
import type { InstanceDeps } from './instance-deps.ts';
import type { OwnedServer, ProcessHost } from './run-process.ts';

/** The process side of an instance for its `runProcess` actor: spawn, adopt, dump, and the launch record. */
export function createProcessHost(deps: InstanceDeps, revision: () => string | null): ProcessHost {
  const { bus, log } = deps;
  const key = deps.instance.key;
  const serverLog = log.child('server');
  return {
    key,
    log,
    apiPort: () => deps.instance.settings.ApiPort,
    shutdownWindows: () => ({
      requestMs: deps.config.timing.ShutdownRequestSeconds * 1000,
      exitMs: deps.config.timing.ShutdownExitSeconds * 1000,
    }),

    secret: generateSecret,

    async launch(launchId, secret): Promise<OwnedServer> {
      const instance = deps.instance;
      const provider = deps.provider;
      const installed = revision();
      const providerCvars = provider?.launchCvars && installed !== null ? await provider.launchCvars(installed) : [];
      const env = inheritedEnv(process.env, { agones: deps.config.agones !== null });
      const spec = buildLaunchSpec({ key, instance, baseUrl: deps.baseUrl, secret, providerCvars, env });
      // Written before the spawn: a daemon killed between the spawn and the launch record below would otherwise
      // leave a server that the next daemon cannot see, and that one would launch a second copy beside it.
      await deps
        .recordSpawning?.({ program: spec.program, args: spec.args, secret, launchedAt: new Date().toISOString() })
        .catch((err: unknown) => log.warn('could not record the spawn in data.json', { error: describeError(err) }));
      const logDir = join(instance.dir, 'logs');
      const retryMs = logRetryMs(deps.config);
      const proc = await spawnServer(spec, {
        logDir,
        persist: deps.config.persistServers,
        rotation: serverLogRotation(deps.config),
        retryMs,
        health: serverLogHealth(key, join(logDir, 'server.log'), bus),
        onLine: (stream, line) => {
          bus.emit('instance:log', { key, stream, line, at: Date.now() });
          // Echoed into the daemon's log with the instance key; stderr lines stand out as warnings.
          if (stream === 'stderr') serverLog.warn(line);
          else serverLog.info(line);
        },
      });
      log.info('server launched', { pid: proc.pid, revision: installed ?? '(none)' });
      bus.emit('instance:launch', { key, pid: proc.pid, launchId, revision: installed, at: Date.now() });
      deps
        .recordLaunch({
          pid: proc.pid,
          startTime: proc.startTime ?? '',
          program: spec.program,
          args: spec.args,
          secret,
          launchedAt: new Date().toISOString(),
        })
        .catch((err: unknown) => log.warn('could not record the launch in data.json', { error: describeError(err) }));
      return { proc, secret };
    },

    adopt(pid): OwnedServer | null {
      const record = deps.adoptable();
      if (!record || record.pid !== pid) return null;
      log.info('adopted the server left running by the previous daemon', { pid });
      return { proc: adoptedProcess(pid, record.startTime), secret: record.secret };
    },

    async dump(proc) {
      const s = deps.instance.settings;
      if (!s.DumpOnTimeout) return;
      try {
        await dumpProcess(proc.pid, {
          dumpsDir: join(deps.instance.dir, 'dumps'),
          type: s.TimeoutDumpType,
          timeoutMs: deps.config.timing.DumpTimeoutSeconds * 1000,
          program: deps.instance.program,
          log,
        });
      } catch (err) {
        log.warn('dump failed', { error: describeError(err) });
      }
    },

    released(how) {
      if (how === 'detached') return;
      deps
        .recordLaunch(null)
        .catch((err: unknown) => log.warn('could not update data.json', { error: describeError(err) }));
    },
  };
}
