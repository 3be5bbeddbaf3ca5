import { join } from 'node:path';
import { monotonicMs } from '../clock.ts';
import { consoleOf } from '../config/sections/console-hub.ts';
import { describeError, LaunchBlockedError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { adoptedProcess } from '../process/adopted-process.ts';
import { CONSOLE_FIFO } from '../process/console-fifo.ts';
import { dumpProcess } from '../process/dump.ts';
import { shutdownWindows } from '../process/graceful.ts';
import { buildLaunchSpec, generateSecret, inheritedEnv } from '../process/launch-spec.ts';
import { type PortHolder, portBindsFree, portHolders } from '../process/port-holders.ts';
import { type ExitStatus, type ServerProcess, spawnServer } from '../process/spawn.ts';
import { type LaunchTrack, MARKER_ENV, type ProcessTracking } from '../process/tracking.ts';
import { retentionRule } from '../store/retention.ts';
import type { InstanceDeps } from './instance-deps.ts';
import type { OwnedServer, ProcessHost } from './run-process.ts';
import { echoServerLine, serverLogOptions, serverLogOutage } from './server-log.ts';

/** The server's last output line is kept to say why it ended; a line longer than this is cut. */
const LAST_LINE_CHARS = 300;

/** The process side of `runProcess`; `owned` hears of each server and its cgroup, for the resource samples. */
export function createProcessHost(
  deps: InstanceDeps,
  revision: () => string | null,
  owned?: (pid: number, cgroup: string | null) => void,
): ProcessHost {
  const { bus, log } = deps;
  const key = deps.instance.key;
  const serverLog = log.child('server');
  const logOutage = serverLogOutage(key, bus);
  const stragglers = (when: 'exit' | 'relaunch') => (pids: number[]) =>
    bus.emit('instance:stragglers', { key, pids, when, at: Date.now() });
  /** The hard limits that could not apply, as last told. */
  let toldLimits = '';
  return {
    key,
    log,
    apiPort: () => deps.instance.settings.ApiPort,
    shutdownWindows: () => shutdownWindows(deps.config),

    secret: generateSecret,

    async launch(launchId, secret, spawning): Promise<OwnedServer> {
      const instance = deps.instance;
      const provider = deps.provider;
      const installed = revision();
      const providerCvars = provider?.launchCvars && installed !== null ? await provider.launchCvars(installed) : [];
      const env = inheritedEnv(process.env, { agones: deps.config.agones !== null });
      const spec = buildLaunchSpec({ key, instance, baseUrl: deps.baseUrl, secret, providerCvars, env });
      const { tracking } = deps;
      await clearForLaunch({
        key,
        port: instance.settings.ApiPort,
        tracking,
        log,
        waitMs: deps.config.timing.StragglerKillSeconds * 1000,
        report: stragglers('relaunch'),
      });
      const limits = instance.settings.Limits ?? {};
      const track = tracking
        ? await tracking.begin(key, { memoryMB: limits.MemoryMB, cpuPercent: limits.CpuPercent, tasks: limits.Tasks })
        : null;
      if (track) spec.env[MARKER_ENV] = track.marker;
      const unapplied = (track?.limitProblems ?? []).join('; ');
      // A wall, not a precondition: the server starts without the limits that cannot apply.
      if (unapplied !== toldLimits && unapplied !== '') log.warn(`${unapplied}; the server runs without that limit`);
      toldLimits = unapplied;
      if (tracking?.mode === 'cgroup' && track?.cgroup === null)
        log.warn("could not create the launch's cgroup; tracking its processes by their environment marker");
      const tracked = { cgroup: track?.cgroup ?? null, marker: track?.marker ?? null };
      // Written before the spawn: a daemon killed before the launch record would otherwise leave a server the next
      // daemon cannot see, and it would launch a second copy beside it.
      const record = {
        program: spec.program,
        args: spec.args,
        secret,
        launchedAt: new Date().toISOString(),
        ...tracked,
      };
      await deps.recordSpawning?.(record);
      const logs = serverLogOptions(deps.config, instance, bus);
      let lastLine: string | undefined;
      spawning();
      const started = spawnServer(spec, {
        ...logs,
        persist: deps.config.persistServers,
        outage: logOutage(logs.logDir, logs.retryMs),
        cgroup: track?.cgroup,
        // The FIFO stays in the instance folder, so a server the next daemon adopts keeps its console.
        console: consoleOf(instance.settings.Console ?? false) ? join(instance.dir, CONSOLE_FIFO) : null,
        onLine: (stream, line) => {
          if (line.trim() !== '') lastLine = line.trim().slice(0, LAST_LINE_CHARS);
          echoServerLine(bus, serverLog, key, stream, line);
        },
      });
      // A launch that never started leaves no cgroup behind.
      const spawned = await started.catch(async (err: unknown) => {
        if (tracking && track) await tracking.end(track);
        throw err;
      });
      const proc = tracking && track ? trackedProcess(spawned, track, tracking, log, stragglers('exit')) : spawned;
      log.info('server launched', { pid: proc.pid, revision: installed ?? '(none)' });
      owned?.(proc.pid, track?.cgroup ?? null);
      bus.emit('instance:launch', { key, pid: proc.pid, launchId, revision: installed, at: Date.now() });
      void deps.recordLaunch({ ...record, pid: proc.pid, startTime: proc.startTime ?? '' });
      return { proc, secret, lastLine: () => lastLine };
    },

    adopt(pid): OwnedServer | null {
      const record = deps.adoptable();
      if (!record || record.pid !== pid) return null;
      log.info('adopted the server left running by the previous daemon', { pid });
      const adopted = adoptedProcess(pid, record.startTime);
      const { tracking } = deps;
      // Its launch's cgroup and marker, as recorded, so what it leaves goes with it as for a launch of ours.
      const track = record.marker ? { marker: record.marker, cgroup: record.cgroup ?? null } : null;
      const proc = tracking && track ? trackedProcess(adopted, track, tracking, log, stragglers('exit')) : adopted;
      owned?.(pid, track?.cgroup ?? null);
      return { proc, secret: record.secret };
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
          retention: retentionRule(s.Retention.Dumps),
        });
      } catch (err) {
        log.warn('dump failed', { error: describeError(err) });
      }
    },

    released(how) {
      if (how !== 'detached') void deps.recordLaunch(null);
    },
  };
}

/** Unless detached, what the server left is killed before its exit is reported: the next launch needs the port. */
function trackedProcess(
  proc: ServerProcess,
  track: LaunchTrack,
  tracking: ProcessTracking,
  log: Logger,
  report: (pids: number[]) => void,
): ServerProcess {
  let detached = false;
  const exited = proc.exited.then(async (status): Promise<ExitStatus> => {
    if (detached) return status;
    // Read before `end` removes the cgroup: the kernel's count of the kills at its memory limit.
    const oom = track.memoryMB === undefined ? 0 : await tracking.oomKills(track);
    const killed = await tracking.end(track).catch(() => []);
    if (killed.length > 0) {
      log.warn(`killed ${killed.length} process(es) the server left behind when it exited`, {
        pid: proc.pid,
        pids: killed.join(' '),
      });
      report(killed);
    }
    const atLimit = oom > 0 && (status.code !== 0 || status.signal !== null);
    return atLimit ? { ...status, memoryLimitMB: track.memoryMB } : status;
  });
  return {
    pid: proc.pid,
    startTime: proc.startTime,
    exited,
    kill(signal = 'SIGKILL') {
      proc.kill(signal);
      if (signal === 'SIGKILL' && !detached) tracking.killNow(track);
    },
    detach() {
      detached = true;
      proc.detach();
    },
  };
}

const holdersOf = async (port: number) => ((await portBindsFree(port)) ? [] : portHolders(port));

const who = (port: number, h: PortHolder) => `port ${port} held by pid ${h.pid} (${h.name})`;

/**
 * Before a launch: our holders of the game port are killed with their launch, others left alone. Throws
 * `LaunchBlockedError('port', …)` when one not ours holds it, or it is still held `waitMs` after ours were killed.
 */
export async function clearForLaunch(opts: {
  key: string;
  /** ApiPort, on TCP and UDP. */
  port: number;
  tracking: ProcessTracking | undefined;
  log: Logger;
  /** Timing.StragglerKillSeconds. */
  waitMs: number;
  report?: (pids: number[]) => void;
}): Promise<void> {
  const { port, key, tracking, log } = opts;
  const holders = port > 0 ? await holdersOf(port) : [];
  const foreign: PortHolder[] = [];
  for (const h of holders) {
    if (tracking && (await tracking.owns(h.pid, key))) {
      log.warn(`${who(port, h)}, left from the previous launch; killing it`, { pid: h.pid, proto: h.proto });
    } else foreign.push(h);
  }
  // Ours on the port go with the rest of their launch; any other leftover was swept as the instance started.
  const swept = foreign.length < holders.length ? ((await tracking?.sweep(key).catch(() => [])) ?? []) : [];
  if (swept.length > 0) {
    log.warn(`killed ${swept.length} process(es) left by earlier launches`, { pids: swept.join(' ') });
    opts.report?.(swept);
  }
  const blocked = (message: string) => new LaunchBlockedError('port', message);
  const first = foreign[0];
  if (first?.pid === process.pid)
    throw blocked(`port ${port} is this watchdog's own: ApiPort must differ from the ports in Urls`);
  if (first) {
    throw blocked(`${who(port, first)}, which this watchdog did not start; the server cannot start until it is freed`);
  }
  if (holders.length === 0) return;
  const deadline = monotonicMs() + opts.waitMs;
  for (;;) {
    const left = await holdersOf(port);
    const still = left[0];
    if (!still) return;
    if (monotonicMs() >= deadline) {
      throw blocked(
        `${who(port, still)}, still held ${opts.waitMs / 1000} s after the previous launch's processes were killed`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
