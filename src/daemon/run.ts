import { join, resolve } from 'node:path';
import type { InspectionEvent } from 'xstate';
import type { AgonesWrapper } from '../agones/wrapper.ts';
import { createLoginLimits } from '../auth/login-limits.ts';
import { createSessionStore } from '../auth/sessions.ts';
import { EMPTY_USERS, type UsersDb } from '../auth/users-file.ts';
import { createBus, type DiskReading, subscribe } from '../bus.ts';
import type { ResolvedConfig } from '../config/resolved.ts';
import { describeError } from '../errors.ts';
import { createApp } from '../http/app.ts';
import { createAuditLog } from '../http/audit.ts';
import { connectionLimits, createConnectionGuard } from '../http/connection-guard.ts';
import { recordRecentEvents } from '../http/dashboard/recent-events.ts';
import { createLogWindow } from '../http/log-window.ts';
import { startHttpServers } from '../http/server.ts';
import { createLogger } from '../log.ts';
import { createMetricsCollector } from '../metrics/collector.ts';
import { detectTracking } from '../process/tracking.ts';
import type { InstanceRegistry } from '../supervisor/contract.ts';
import type { StatusExtras } from '../supervisor/status.ts';
import { createSupervisor, type ReconfigureResult, type Supervisor } from '../supervisor/supervisor.ts';
import { checkBaseUrlReachesUs } from './base-url-check.ts';
import { checkinBaseUrl, reachesUs } from './checkin-address.ts';
import { type DiskWatch, watchDisks } from './disk-watch.ts';
import { guardProcess } from './fault-guard.ts';
import { lockFolders, ownedFolders } from './folder-lock.ts';
import { type HubWatches, startHubWatches } from './hub-watches.ts';
import { hostNotifier } from './notifier-host.ts';
import { hostOidc } from './oidc-host.ts';
import { logRefusedRequests, logRejectedCheckins } from './refusal-logs.ts';
import { startUsersReload } from './reload.ts';
import { VERSION } from './version.ts';

/** What a person can do about a server log's write error. */
function remedy(code: string): string {
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'free space on that file system';
  if (code === 'EMFILE' || code === 'ENFILE') return 'the watchdog is out of file descriptors (see Connections.*)';
  if (code === 'EIO') return 'check the device: it reports I/O errors';
  if (code === 'ENOTREG') return 'remove what is there (a named pipe, a socket): only a regular file is written';
  return 'fix the folder (it must exist and be writable)';
}

/** Composition root: wires bus, notifier, audit log, HTTP server and supervisor, then starts every instance. */
export async function runDaemon(
  config: ResolvedConfig,
  opts: {
    /** Handle errors escaping every handler; the process entry sets it, in-process tests do not. */
    guardProcess?: boolean;
    inspect?: (event: InspectionEvent) => void;
    users?: UsersDb;
  } = {},
) {
  const log = createLogger('watchdog');
  // Before anything is read or made: a second daemon here would adopt or relaunch the first one's servers.
  const lock = await lockFolders(ownedFolders(config), { command: 'start' });
  if (lock.mechanism === 'none')
    log.warn(
      `no folder lock (${lock.unavailable}): nothing stops a second daemon in this folder from taking over its servers`,
    );
  const bus = createBus();
  let current = config;
  const unguard = opts.guardProcess ? guardProcess(bus, log) : () => undefined;

  const notifier = hostNotifier(config, bus, log.child('notify'));
  // The HTTP server must listen before the supervisor exists: servers need its bound address as watchdog.baseUrl.
  let supervisor: Supervisor | null = null;
  let agones: AgonesWrapper | null = null;
  const registry: InstanceRegistry = {
    get: (key) => supervisor?.get(key),
    list: () => supervisor?.list() ?? [],
    // Servers left running by the previous daemon may check in, and a CDN may notify, before we are ready.
    starting: (key) => (supervisor ? supervisor.starting(key) : config.instances.some((i) => i.key === key)),
    startingUp: () => supervisor?.startingUp() ?? true,
  };
  let diskWatch: DiskWatch | null = null;
  let hubWatches: HubWatches | null = null;
  const diskReadings = (): DiskReading[] => diskWatch?.readings() ?? [];
  // Each part only once there is something to show.
  const statusExtras = (key: string): StatusExtras => {
    const disk = diskReadings();
    const hub = hubWatches?.status(key) ?? null;
    return {
      ...(agones ? { agones: agones.status() } : {}),
      ...(disk.length > 0 ? { disk } : {}),
      ...(hub === null ? {} : { hub }),
    };
  };
  const stopCheckinLog = logRejectedCheckins(
    bus,
    log.child('checkin'),
    () => current.timing.RejectedCheckinLogSeconds * 1000,
    (key) => registry.get(key) !== undefined,
  );
  const stopLogHealthLog = subscribe(bus, {
    'instance:log-failing': (e) => {
      const retry = `trying again every ${current.timing.LogRetrySeconds} s`;
      const what = `cannot write ${e.file} (${e.code}): dropping its lines and counting them, ${retry}`;
      log.child(e.key).error(`${what}; ${remedy(e.code)}, and it resumes by itself`, { error: e.message });
    },
    'instance:log-resumed': (e) => {
      const what = `writing ${e.file} again; ${e.dropped} line(s) were dropped meanwhile`;
      log.child(e.key).info(what, { dropped: e.dropped });
    },
  });
  const stopRefusedLog = logRefusedRequests(
    bus,
    log.child('http'),
    () => current.timing.RefusedRequestLogSeconds * 1000,
  );
  const limits = connectionLimits(config.settings.Connections);
  const guard = createConnectionGuard(limits);
  const metrics = createMetricsCollector({ bus, registry, version: VERSION, connections: () => guard.counts() });
  let boundUrls: string[] = [];
  // Read at each use: a reload applies to open sessions and the next login at once.
  const sessions = createSessionStore(() => ({
    absoluteMs: current.settings.Users.SessionMinutes * 60_000,
    idleMs: current.settings.Users.SessionIdleMinutes * 60_000,
    max: current.settings.Users.MaxSessions,
  }));
  const oidc = hostOidc(() => current, sessions);
  const users = startUsersReload({
    file: config.usersFile,
    initial: opts.users ?? EMPTY_USERS,
    log: log.child('users'),
  });
  const app = createApp({
    registry,
    bus,
    log: log.child('http'),
    version: VERSION,
    admin: () => current.admin,
    users: users.current,
    sessions,
    oidc: oidc.login,
    usersFile: config.usersFile,
    reloadUsers: () => users.reload('user routes'),
    loginLimits: createLoginLimits(() => ({
      perMinute: current.settings.Users.LoginAttemptsPerMinute,
      freeFailures: current.settings.Users.LoginFailuresBeforeLockout,
      lockoutMs: current.settings.Users.LoginLockoutSeconds * 1000,
      maxLockoutMs: current.settings.Users.LoginLockoutMaxSeconds * 1000,
    })),
    sessionMinutes: () => current.settings.Users.SessionMinutes,
    trustedHeaders: () => current.settings.Users.TrustedHeaders,
    metrics,
    recent: recordRecentEvents(bus),
    trustedProxies: () => current.settings.TrustedProxies,
    ownOrigins: () => (current.baseUrl === undefined ? boundUrls : [current.baseUrl, ...boundUrls]),
    disk: diskReadings,
    trustCheckin: (socket) => guard.trust(socket),
  });
  // While descriptors run out, every connection attempt may fail its accept: one line a minute, then the count.
  const acceptErrors = createLogWindow({
    everyMs: () => 60_000,
    onSummary: (s) =>
      log.warn(`the HTTP listener failed ${s.count} more accepts in ${s.seconds} s, the last: ${s.last}`),
  });
  const onError = (err: Error) => {
    if (!acceptErrors.admit('accept', err.message)) return;
    log.warn(`the HTTP listener cannot accept connections: ${err.message}`, { error: describeError(err) });
  };
  const http = await startHttpServers(app, config.listen, { guard, timeouts: limits, onError }).catch(
    async (err: unknown) => {
      users.stop();
      await lock.release();
      throw err;
    },
  );
  // After the bind: a daemon that cannot listen exits without having created any folder.
  const audit = createAuditLog({
    file: join(config.workDir, 'logs', 'audit.log'),
    bus,
    rotation: () => ({ maxBytes: current.settings.Logs.AuditLogMaxBytes, keep: current.settings.Logs.AuditLogFiles }),
    refusedEveryMs: () => current.timing.RefusedRequestLogSeconds * 1000,
    retryMs: config.timing.LogRetrySeconds * 1000,
  });
  boundUrls = http.bound.map((b) => b.url);
  lock.announce(boundUrls);
  const checkinUrl = checkinBaseUrl(http.bound);
  // BaseUrl is only what clients are given (client downloads, links); servers check in where we listen.
  const publicBaseUrl = config.baseUrl ?? `${checkinUrl}/`;
  log.info(`listening on ${boundUrls.join(' and ')}`, {
    checkinUrl,
    baseUrl: publicBaseUrl,
    instances: config.instances.length,
    maxConnections: limits.maxConnections,
    maxConnectionsPerSource: limits.maxPerSource,
  });

  const tracking = await detectTracking({
    workDir: config.workDir,
    forceMarker: config.settings.Process.Tracking === 'Environment',
    killMs: () => current.timing.StragglerKillSeconds * 1000,
  });
  log.info(`process tracking: ${tracking.description}`);
  supervisor = createSupervisor({
    config,
    bus,
    log,
    baseUrl: checkinUrl,
    publicBaseUrl,
    reachesUs: (url) => reachesUs(url, http.bound),
    tracking,
    statusExtras,
    inspect: opts.inspect,
  });
  if (config.baseUrl) void checkBaseUrlReachesUs(config.baseUrl, log, config.settings.Answers);
  // Agones mode wraps the one instance (config checks make sure of it) before it starts, to see its first check-in.
  const wrapped = config.instances[0];
  if (config.agones && wrapped) {
    const { startAgonesWrapper } = await import('../agones/wrapper.ts'); // only here: its SDK client loads undici
    const status = () => registry.get(wrapped.key)?.status();
    agones = startAgonesWrapper({
      config: config.agones,
      instance: {
        key: wrapped.key,
        apiPort: wrapped.settings.ApiPort,
        answers: () => current.settings.Answers,
        state: () => status()?.state ?? 'stopped.idle',
        crashStreak: () => status()?.crashStreak ?? 0,
      },
      bus,
      log: log.child('agones'),
    });
  }
  // Before the instances start: a server's first run is watched too.
  hubWatches = startHubWatches({ config: () => current, bus, log: log.child('hub'), registry });
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((r) => (resolveDone = r));
  let shuttingDown: Promise<void> | null = null;
  const sup = supervisor;
  const watches = hubWatches;

  const shutdown = (reason: string): Promise<void> => {
    shuttingDown ??= (async () => {
      log.info(`shutting down (${reason})`, { persistServers: config.persistServers });
      try {
        await sup.shutdown();
      } catch (err) {
        log.error('error while stopping instances', { error: describeError(err) });
      }
      // No /shutdown here: a signal to the daemon in a pod means the pod is already going (docs/agones.md).
      await agones?.stop();
      await tracking.close();
      stopCheckinLog();
      stopRefusedLog();
      stopLogHealthLog();
      users.stop();
      diskWatch?.stop();
      watches.stop();
      await Promise.allSettled([notifier.stop(), audit.close(), http.close()]);
      metrics.stop();
      await lock.release();
      unguard();
      log.info('stopped');
      resolveDone();
    })();
    return shuttingDown;
  };

  // A start that fails (an instance folder that cannot be made) closes what is open, so the process can exit.
  await supervisor.start().catch(async (err: unknown) => {
    await shutdown('the instances could not start');
    throw err;
  });
  // A first start has just made the instance root: hold its inode too, so a bind mount of it meets this lock.
  await lock.refresh().catch((err: unknown) => log.warn(`folder lock: ${describeError(err)}`));
  diskWatch = watchDisks({
    folders: [
      { holds: 'instances', path: resolve(config.workDir, config.settings.Servers.InstanceRoot) },
      { holds: 'working folder', path: config.workDir },
    ],
    settings: () => current.settings.Disk,
    bus,
    log: log.child('disk'),
  });

  const reconfigure = async (next: ResolvedConfig): Promise<ReconfigureResult> => {
    if (shuttingDown) return { added: [], removed: [], updated: [], failed: [] };
    current = next;
    oidc.reconfigured(next);
    notifier.reconfigure(next);
    return sup.reconfigure(next);
  };

  return { url: boundUrls[0] ?? checkinUrl, done, shutdown, reconfigure };
}
