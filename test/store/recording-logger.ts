import type { LogFields, Logger } from '../../src/log.ts';

export interface Recorded {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  fields: LogFields | undefined;
}

/** A Logger that keeps its lines, so a test can assert what was said (and that no secret was). */
export function recordingLogger(): Logger & { lines: Recorded[] } {
  const lines: Recorded[] = [];
  const log = (level: Recorded['level']) => (msg: string, fields?: LogFields) => {
    lines.push({ level, msg, fields });
  };
  const self: Logger & { lines: Recorded[] } = {
    lines,
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: () => self,
  };
  return self;
}
