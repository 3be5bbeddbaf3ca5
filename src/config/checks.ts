import { resolve } from 'node:path';
import { type LogLevel, parseLogLevel } from '../log.ts';
import { NotRegularFileError, readRegularFile } from '../regular-file.ts';
import { formatPath, problemLine } from './issues.ts';
import { type ListenAddress, parseUrls } from './listen.ts';
import { type ConfigPath, isMap, type ReportProblem, rawInstances } from './merge.ts';
import { checkConnections } from './sections/connections.ts';
import { checkScheduledCommands } from './sections/maintenance.ts';
import { checkRouteInstances } from './sections/notification.ts';

/** Whether a `Serilog.MinimumLevel.Override` key names one of our log scopes (`watchdog:http`, `audit`). */
const isOwnScope = (scope: string) => ['watchdog', 'audit'].includes(scope.split(/[.:]/)[0]?.toLowerCase() ?? '');

/** The real watchdog's settings accepted but not acted on, each with what to know: one warning at start. */
function unusedSettings(raw: Record<string, unknown>): string[] {
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
  if (typeof proc.Mode === 'string' && proc.Mode.toLowerCase() === 'systemd')
    out.push('Process.Mode: Systemd (servers run as child processes of this watchdog)');
  const systemd = ['UnitManagementMode', 'UnitPrefix', 'Manager'].filter((k) => proc[k] !== undefined);
  if (systemd.length > 0) out.push(`${systemd.map((k) => `Process.${k}`).join(', ')} (systemd units are not used)`);
  return out;
}

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a folder',
};

/**
 * A token or password kept in its own file, ONE trailing newline (editors' and `echo`'s) trimmed: the real watchdog
 * keeps it, which makes the token unusable over HTTP Basic. Never throws: `refuse` is told why it cannot be had.
 */
async function readSecretFile(path: string, cwd: string, refuse: (why: string) => undefined) {
  const file = resolve(cwd, path);
  let text: string;
  try {
    // Only a regular file: a FIFO would hold a libuv thread and the loader for good, and /dev/zero never ends.
    text = await readRegularFile(file, 'utf8');
  } catch (err) {
    if (err instanceof NotRegularFileError && err.code !== 'EISDIR') return refuse(`${file} is not a regular file`);
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : String(err);
    return refuse(`cannot read ${file}: ${REASONS[code] ?? code}`);
  }
  const value = text.replace(/\r?\n$/, '');
  return value === '' ? refuse(`${file} is empty`) : value;
}

/** Keys each update type cannot work without, and what each holds. */
const REQUIRED_UPDATE_KEYS: Record<string, [key: string, what: string][]> = {
  Manifest: [['ManifestUrl', 'a manifest URL']],
  CiServer: [
    ['BaseUrl', 'the CI server URL'],
    ['JobName', 'the CI job name'],
  ],
  Jenkins: [
    ['BaseUrl', 'the Jenkins URL'],
    ['JobName', 'the Jenkins job name'],
  ],
  Git: [['BaseUrl', 'the repository URL']],
  Local: [['CurrentVersion', 'the version of the build in bin/']],
};

const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);

/** Map keys valibot's records skip silently (against prototype pollution): an instance so named would vanish. */
const RESERVED_KEYS = new Set(['__proto__', 'prototype', 'constructor']);
const RESERVED = 'a name other than __proto__, prototype or constructor (JavaScript reserves them)';

/** Rules a schema cannot express, reading the raw settings defensively (a wrong type is the schema's problem). */
export async function checkSettings(raw: Record<string, unknown>, sourceOf: (p: ConfigPath) => string, cwd: string) {
  const problems: string[] = [];
  const warnings: string[] = [];
  const problem: ReportProblem = (path, expected, found) =>
    problems.push(problemLine(sourceOf(path), path, expected, found));
  const warn = (path: ConfigPath, text: string) => warnings.push(`${sourceOf(path)}: ${formatPath(path)}: ${text}`);
  const secretIn = (file: string, at: ConfigPath, what: string) =>
    readSecretFile(file, cwd, (why) => void problem(at, `expected a readable file holding ${what} (${why})`, file));

  // Urls
  let listen: ListenAddress[] | undefined = [{ host: 'localhost', port: 5000 }];
  const urls = raw.Urls;
  if (typeof urls === 'string') {
    const r = parseUrls(urls);
    if (!r.ok) {
      problem(['Urls'], r.expected, urls);
      listen = undefined;
    } else listen = r.listen;
  }

  // Log level
  let logLevel: LogLevel = 'info';
  const serilog = raw.Serilog;
  const minimum = isMap(serilog) ? serilog.MinimumLevel : undefined;
  const levelPath = isMap(minimum) ? ['Serilog', 'MinimumLevel', 'Default'] : ['Serilog', 'MinimumLevel'];
  const levelName = isMap(minimum) ? str(minimum.Default) : str(minimum);
  const levelProblem = 'expected a level: Verbose, Debug, Information, Warning, Error or Fatal';
  if (levelName !== undefined) {
    const level = parseLogLevel(levelName);
    if (level) logLevel = level;
    else problem(levelPath, levelProblem, levelName);
  }
  // Those that name our log scopes (`watchdog.http` → `watchdog:http`).
  const logOverrides: Array<[scope: string, level: LogLevel]> = [];
  const overrides = isMap(minimum) && isMap(minimum.Override) ? minimum.Override : {};
  for (const [scope, name] of Object.entries(overrides)) {
    if (!isOwnScope(scope) || typeof name !== 'string') continue;
    const level = parseLogLevel(name);
    if (level) logOverrides.push([scope.replace(/[.:]/g, ':'), level]);
    else problem(['Serilog', 'MinimumLevel', 'Override', scope], levelProblem, name);
  }

  const unused = unusedSettings(raw);
  if (unused.length > 0) warnings.push(`accepted but not used by this watchdog: ${unused.join('; ')}`);

  // Admin
  let admin: { username: string; password: string } | undefined;
  const adm = raw.Admin;
  if (isMap(adm)) {
    const username = str(adm.Username);
    let password = str(adm.Password);
    const passwordFile = str(adm.PasswordFile);
    if (passwordFile !== undefined)
      password = (await secretIn(passwordFile, ['Admin', 'PasswordFile'], 'the password')) ?? password;
    else if (adm.Password === undefined)
      problem(['Admin', 'Password'], 'expected a password (or PasswordFile) because Admin is set', undefined);
    if (username !== undefined && password !== undefined) admin = { username, password };
  }

  // Instances; tokens read from `ApiTokenFile`, by key.
  const tokenFiles = new Map<string, string>();
  const instances = rawInstances(raw);
  const ports = new Map<number, string>();
  for (const [key, inst] of Object.entries(instances)) {
    const base = ['Servers', 'Instances', key];
    if (RESERVED_KEYS.has(key)) problem(base, `expected an instance id: ${RESERVED}`, inst);
    if (!isMap(inst)) continue;
    const env = isMap(inst.EnvironmentVariables) ? inst.EnvironmentVariables : {};
    for (const name of Object.keys(env).filter((k) => RESERVED_KEYS.has(k)))
      problem([...base, 'EnvironmentVariables', name], `expected ${RESERVED}`, env[name]);

    const type = str(inst.UpdateType);
    const updates = isMap(inst.Updates) ? inst.Updates : {};
    for (const [need, what] of (type && REQUIRED_UPDATE_KEYS[type]) || []) {
      if (updates[need] === undefined)
        problem([...base, 'Updates', need], `expected ${what} because UpdateType is ${type}`, undefined);
    }

    const tokenFile = str(inst.ApiTokenFile);
    if (tokenFile !== undefined) {
      const token = await secretIn(tokenFile, [...base, 'ApiTokenFile'], 'the token');
      if (token !== undefined) tokenFiles.set(key, token);
    } else if (inst.ApiToken === undefined) {
      warn(base, 'no ApiToken or ApiTokenFile: control is refused but to users and keys (users.yml)');
    }

    const consoleOn = inst.Console === true || (isMap(inst.Console) && inst.Console.Enabled !== false);
    checkScheduledCommands(base, inst, consoleOn, problem);

    const port = inst.ApiPort;
    if (typeof port === 'number') {
      const other = ports.get(port);
      if (other !== undefined)
        problem([...base, 'ApiPort'], `expected a port no other instance uses (${other} uses it)`, port);
      else ports.set(port, key);
    }
  }

  checkRouteInstances(raw, problem);
  checkConnections(raw, problem);

  // Read like the other secret files: the secret is never in appsettings.yml.
  const users = isMap(raw.Users) && isMap(raw.Users.Oidc) ? raw.Users.Oidc : {};
  const secretFile = str(users.ClientSecretFile);
  const oidcSecret = secretFile
    ? await secretIn(secretFile, ['Users', 'Oidc', 'ClientSecretFile'], 'the client secret')
    : undefined;

  return { problems, warnings, listen, logLevel, logOverrides, admin, tokenFiles, oidcSecret };
}
