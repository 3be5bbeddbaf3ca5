export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(scope: string): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** Field names whose values never reach a log line, whoever passes them. */
const SECRET = /token|secret|password|authorization/i;

const sink = {
  level: (process.env.WATCHDOG_LOG_LEVEL as LogLevel | undefined) ?? 'info',
  /** By scope prefix (`watchdog:http`); the longest match wins over `level`. */
  overrides: [] as Array<[scope: string, level: LogLevel]>,
  json: process.env.WATCHDOG_LOG_FORMAT === 'json',
  write: (line: string) => writeStderr(line + '\n'),
};

/** A lost stderr (EPIPE, EIO, a full disk) loses the line, not the daemon: an unheard `error` would end it. */
process.stderr.on('error', () => undefined);

function writeStderr(text: string): void {
  try {
    process.stderr.write(text);
  } catch {
    // A synchronous failure (a file on a full disk): same as above.
  }
}

const levels = new Map<string, number>();

function thresholdOf(scope: string): number {
  let t = levels.get(scope);
  if (t === undefined) {
    let best: [string, LogLevel] | undefined;
    for (const o of sink.overrides) {
      const match = scope === o[0] || scope.startsWith(`${o[0]}:`);
      if (match && (!best || o[0].length > best[0].length)) best = o;
    }
    t = ORDER[best?.[1] ?? sink.level];
    levels.set(scope, t);
  }
  return t;
}

/** `Serilog.MinimumLevel.Default` or `--log-level`, the `Override`s (case-insensitive, whole `:` parts), the format. */
export function configureLogging(opts: {
  level?: LogLevel;
  overrides?: Array<[scope: string, level: LogLevel]>;
  json?: boolean;
  write?: (line: string) => void;
}): void {
  levels.clear();
  if (opts.level) sink.level = opts.level;
  if (opts.overrides) sink.overrides = opts.overrides.map(([scope, level]) => [scope.toLowerCase(), level]);
  if (opts.json !== undefined) sink.json = opts.json;
  if (opts.write) sink.write = opts.write;
}

export function parseLogLevel(value: string | undefined): LogLevel | undefined {
  if (!value) return undefined;
  const v = value.toLowerCase();
  // Serilog names: Verbose/Debug/Information/Warning/Error/Fatal.
  if (v === 'verbose' || v === 'debug' || v === 'trace') return 'debug';
  if (v === 'information' || v === 'info') return 'info';
  if (v === 'warning' || v === 'warn') return 'warn';
  if (v === 'error' || v === 'fatal') return 'error';
  return undefined;
}

function render(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  if (value instanceof Error) return JSON.stringify(value.message);
  return JSON.stringify(value) ?? String(value);
}

const clean = (fields: LogFields | undefined): LogFields =>
  Object.fromEntries(Object.entries(fields ?? {}).map(([k, v]) => [k, SECRET.test(k) ? '[redacted]' : v]));

export function createLogger(scope: string): Logger {
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[level] < thresholdOf(scope.toLowerCase())) return;
    const f = clean(fields);
    const time = new Date().toISOString();
    if (sink.json) {
      sink.write(JSON.stringify({ time, level, scope, msg, ...f }));
    } else {
      const extra = Object.entries(f)
        .map(([k, v]) => ` ${k}=${render(v)}`)
        .join('');
      sink.write(`${time} ${level.toUpperCase().padEnd(5)} [${scope}] ${msg}${extra}`);
    }
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (s) => createLogger(`${scope}:${s}`),
  };
}
