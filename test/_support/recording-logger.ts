import type { LogFields, Logger } from '../../src/log.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

export interface Recorded {
  level: Level;
  msg: string;
  fields: LogFields | undefined;
}

/** A Logger that pushes each call, as `keep` shapes it, onto `lines` (one body for every recording logger here). */
export function keepingLogger<T>(
  lines: T[],
  keep: (level: Level, msg: string, fields: LogFields | undefined) => T,
): Logger {
  const at = (level: Level) => (msg: string, fields?: LogFields) => {
    lines.push(keep(level, msg, fields));
  };
  const self: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => self,
  };
  return self;
}

/** A Logger that keeps its lines, so a test can assert what was said (and that no secret was). */
export function recordingLogger(): Logger & { lines: Recorded[] } {
  const lines: Recorded[] = [];
  return Object.assign(
    keepingLogger(lines, (level, msg, fields) => ({ level, msg, fields })),
    { lines },
  );
}

/** The same as one text line per call, `level msg {fields}`, for matching with a regex or startsWith. */
export function captureLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return Object.assign(
    keepingLogger(lines, (level, msg, fields) => `${level} ${msg} ${JSON.stringify(fields ?? {})}`),
    { lines },
  );
}
