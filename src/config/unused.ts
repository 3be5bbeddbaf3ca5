import { isMap } from './merge.ts';

/** The first part of every log scope this daemon writes (`watchdog:http`, `watchdog:<key>:server`, `audit`). */
const OWN_SCOPES = new Set(['watchdog', 'audit']);

/** Whether a `Serilog.MinimumLevel.Override` key names one of our log scopes (`.` or `:` between parts). */
export function isOwnScope(scope: string): boolean {
  return OWN_SCOPES.has(scope.split(/[.:]/)[0]?.toLowerCase() ?? '');
}

const SYSTEMD_KEYS = ['UnitManagementMode', 'UnitPrefix', 'Manager'];

/**
 * Settings of the real watchdog and its ASP.NET host that this watchdog accepts but does not act on, by key path,
 * each with what to know about it. Listed in one warning at start so nothing a migrated file says is lost silently.
 */
export function unusedSettings(raw: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (typeof raw.AllowedHosts === 'string' && raw.AllowedHosts.trim() !== '*')
    out.push('AllowedHosts (no host filtering; put a proxy in front)');
  if (raw.Kestrel !== undefined) out.push('Kestrel (use Urls)');
  if (raw.Logging !== undefined) out.push('Logging (use Serilog.MinimumLevel)');
  const serilog = isMap(raw.Serilog) ? raw.Serilog : {};
  const sinks = Object.keys(serilog).filter((k) => k !== 'MinimumLevel');
  if (sinks.length > 0)
    out.push(
      `${sinks.map((k) => `Serilog.${k}`).join(', ')} (the log goes to stderr; --log-format json for collectors)`,
    );
  const minimum = serilog.MinimumLevel;
  const foreign =
    isMap(minimum) && isMap(minimum.Override) ? Object.keys(minimum.Override).filter((k) => !isOwnScope(k)) : [];
  if (foreign.length > 0)
    out.push(`Serilog.MinimumLevel.Override for ${foreign.join(', ')} (only watchdog.* and audit scopes exist here)`);
  const proc = isMap(raw.Process) ? raw.Process : {};
  if (typeof proc.Mode === 'string' && proc.Mode.toLowerCase() === 'systemd') {
    out.push('Process.Mode: Systemd (servers run as child processes of this watchdog)');
  }
  const systemd = SYSTEMD_KEYS.filter((k) => proc[k] !== undefined);
  if (systemd.length > 0) out.push(`${systemd.map((k) => `Process.${k}`).join(', ')} (systemd units are not used)`);
  return out;
}
