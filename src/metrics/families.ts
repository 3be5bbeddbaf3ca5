import { Counter, Gauge, type Registry } from 'prom-client';

const I = ['instance'] as const;
const DISK = ['holds', 'mount'] as const;

/** The daemon's metric families, registered in `registry`; one line each, so the list reads as a table. */
export function createFamilies(registry: Registry) {
  const registers = [registry];
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers });
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name, help, labelNames, registers });
  // biome-ignore format: one metric a line
  return {
    info: gauge('watchdog_instance_info', 'Always 1; the labels carry the instance name and installed revision.', ['instance', 'name', 'revision']),
    state: gauge('watchdog_instance_state', 'One-hot: 1 for the state path the instance is in, 0 for every other state of the chart.', ['instance', 'state']),
    sinceCheckin: gauge('watchdog_instance_seconds_since_checkin', 'Seconds since the running server last checked in; absent before its first check-in.', I),
    uptime: gauge('watchdog_instance_uptime_seconds', 'Seconds since the current server process was launched; absent when none runs.', I),
    startupFailures: gauge('watchdog_instance_startup_failures', 'Consecutive launches that exited before their first check-in.', I),
    restarts: counter('watchdog_instance_restarts_total', 'Server relaunches by reason.', ['instance', 'reason']),
    alerts: counter('watchdog_alerts_total', 'Alerts raised (sent to the chat webhook when one is configured), by kind.', ['instance', 'kind']),
    updates: counter('watchdog_updates_total', 'Update installs by result.', ['instance', 'result']),
    updateDuration: gauge('watchdog_update_duration_seconds', 'How long the last installed update took, check to install.', I),
    updateBytes: gauge('watchdog_update_bytes', 'Bytes downloaded by the last update (the archive size once verified).', I),
    rss: gauge('watchdog_instance_resident_memory_bytes', 'Resident memory of the game server and the processes it started (VmRSS summed), at the last sample (Timing.ResourceSampleSeconds).', I),
    cpu: counter('watchdog_instance_cpu_seconds_total', 'User plus system CPU time of the game server and the processes it started, at the last sample; starts over with each launch.', I),
    hubListed: gauge('watchdog_instance_hub_listed', 'Whether a hub the running server advertises to lists it (1) or not (0); absent when not known.', ['instance', 'hub']),
    hubMissing: gauge('watchdog_instance_hub_missing_seconds', 'Seconds a hub the running server advertises to has not listed it; absent while listed or unknown.', ['instance', 'hub']),
    players: gauge('watchdog_instance_players', "Players on the server by its /status, at the last sample; absent when unknown.", I),
    lagMean: gauge('watchdog_event_loop_lag_seconds', "Mean delay of the daemon's event loop since the previous scrape (0 at the first)."),
    lagP99: gauge('watchdog_event_loop_lag_p99_seconds', "99th percentile delay of the daemon's event loop since the previous scrape (0 at the first)."),
    lagMax: gauge('watchdog_event_loop_lag_max_seconds', "Largest delay of the daemon's event loop since the previous scrape (0 at the first)."),
    maintenancePending: gauge('watchdog_maintenance_pending', '1 while a maintenance restart or update waits for its moment (policy, players, hold), else 0.', I),
    maintenanceNext: gauge('watchdog_maintenance_next_scheduled_timestamp_seconds', 'Unix time of the next scheduled restart (what="restart") or update check (what="update-check"); absent when none is scheduled.', ['instance', 'what']),
    stragglers: counter('watchdog_stragglers_killed_total', 'Processes a launch left behind (outside its process group), killed when its server exited (when="exit") or before the next launch (when="relaunch").', ['instance', 'when']),
    build: gauge('watchdog_build_info', 'Always 1; the label carries the daemon version.', ['version']),
    logDropped: counter('watchdog_log_lines_dropped_total', "Lines of a server's log that could not be written (full disk, removed folder, …) and were dropped.", I),
    refused: counter('watchdog_refused_requests_total', 'Requests refused before their credentials were accepted, by route (control, status, logs, admin, cross-site) and status.', ['route', 'status']),
    logins: counter('watchdog_logins_total', 'Dashboard logins (POST /login) by result: ok, wrong_password (or no such user), wrong_code (a TOTP code missing, wrong or used before), limited (the source tried too often), locked (the account is locked for now), busy.', ['result']),
    rightsRefused: counter('watchdog_permission_refusals_total', 'Requests of a known user, key or login refused (403) for want of a right, by the permission can() refused.', ['permission']),
    faults: counter('watchdog_uncaught_errors_total', 'Errors that escaped every handler; the daemon logged each with its stack and went on.', ['kind']),
    updateChecks: counter('watchdog_update_checks_total', 'Update checks that ended, by result: available (an update was found), none, failed.', ['instance', 'result']),
    updateCheckLastSuccess: gauge('watchdog_update_check_last_success_timestamp_seconds', 'When an update check of the instance last worked (Unix time); absent until one has.', I),
    backups: counter('watchdog_backups_total', "Snapshots of an instance's data that ended, by result: ok, failed.", ['instance', 'result']),
    backupLastSuccess: gauge('watchdog_backup_last_success_timestamp_seconds', 'When a snapshot of the instance last worked (Unix time); absent until one has.', I),
    backupLastSize: gauge('watchdog_backup_last_size_bytes', 'The compressed size of the last snapshot that worked.', I),
    // One series per watched file system.
    diskFree: gauge('watchdog_disk_free_bytes', 'Bytes the daemon may still write on the file system holding the instance root or the working folder (holds says which).', DISK),
    diskTotal: gauge('watchdog_disk_total_bytes', 'Size of that file system in bytes.', DISK),
    diskThreshold: gauge('watchdog_disk_low_threshold_bytes', 'Below this many free bytes the file system counts as low (Disk.LowFreeMegabytes or Disk.LowFreePercent, the lower).', DISK),
    diskLow: gauge('watchdog_disk_low', '1 while the file system is low on space (the chat was told once), else 0.', DISK),
    /** The HTTP connection guard's families, for a daemon that has one. */
    connections: () => ({
      open: gauge('watchdog_http_connections', 'HTTP connections open now, over every listening address.'),
      dropped: counter('watchdog_http_connections_dropped_total', 'HTTP connections refused (action="refused") or closed to make room (action="evicted") because a cap was reached: cap="total" (Connections.MaxConnections) or cap="source" (MaxConnectionsPerSource).', ['action', 'cap']),
    }),
  };
}
