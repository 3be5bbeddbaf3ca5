import { type Bus, subscribe } from '../bus.ts';
import { createLogger, type Logger } from '../log.ts';
import { DEFAULT_ROTATION, type LogRotation } from '../process/log-file.ts';
import { createRotatingLogWriter } from '../process/log-writer.ts';
import { createLogWindow } from './log-window.ts';
import { refusedSummary, sourceOf } from './refused.ts';

/**
 * Appends every control event, login, logout and user change to `file` as a JSON line. Requests refused before their
 * credentials were accepted: the first per source in full, then a `summary` line per `refusedEveryMs`
 * (`Timing.RefusedRequestLogSeconds`). A write failure is logged once and retried, never thrown into the bus.
 */
export function createAuditLog(opts: {
  file: string;
  bus: Bus;
  log?: Logger;
  rotation?: () => LogRotation;
  refusedEveryMs?: () => number;
  retryMs?: number;
}): { close(): Promise<void> } {
  const log = opts.log ?? createLogger('audit');
  const retryMs = opts.retryMs ?? 5000;
  const out = createRotatingLogWriter(opts.file, opts.rotation ?? DEFAULT_ROTATION, {
    retryMs,
    // Audit lines are few, and none may go unwritten into a removed file: it is looked for before each one.
    checkMs: 0,
    noteGaps: false,
    health: {
      onFailing: (code, message) =>
        log.error(
          `cannot write the audit log ${opts.file} (${code}): ${message}; trying again every ${retryMs / 1000} s`,
          {
            file: opts.file,
          },
        ),
      onResumed: (dropped) =>
        log.info(`writing the audit log ${opts.file} again; ${dropped} line(s) were dropped meanwhile`, { dropped }),
    },
  });
  // The ISO `time` first, from the line's `at`.
  const write = (line: { at: number } & Record<string, unknown>) =>
    out.writeLine(JSON.stringify({ time: new Date(line.at).toISOString(), ...line }));

  const refusals = createLogWindow({
    everyMs: opts.refusedEveryMs ?? (() => 60_000),
    onSummary: (s) =>
      write({
        summary: refusedSummary(s.bucket, s.count, s.seconds),
        remote: s.bucket,
        refused: s.count,
        seconds: s.seconds,
        at: Date.now(),
      }),
  });
  const unsubscribe = subscribe(opts.bus, {
    // null rather than an absent field, so every line has the same keys.
    'instance:control': (e) =>
      write({ ...e, user: e.user ?? null, remote: e.remote ?? null, reason: e.reason ?? null }),
    'daemon:request-refused': (e) => {
      if (!refusals.admit(sourceOf(e.remote))) return;
      write({
        key: e.key ?? null,
        action: e.action,
        user: e.user ?? null,
        remote: e.remote ?? null,
        status: e.status,
        result: 'refused',
        reason: e.reason,
        route: e.route,
        at: e.at,
      });
    },
    // A login names its user; a failed one is a stranger's to repeat, so it is rate-limited by source as refusals are.
    'daemon:login': (e) => {
      if (e.result !== 'ok' && !refusals.admit(sourceOf(e.remote))) return;
      write({
        action: 'login',
        user: e.user,
        remote: e.remote ?? null,
        result: e.result,
        at: e.at,
      });
    },
    'daemon:logout': (e) => write({ action: 'logout', user: e.user, remote: e.remote ?? null, at: e.at }),
    // Who changed whose account: `user` is the actor, as on every other line.
    'daemon:user-changed': (e) =>
      write({
        action: e.action,
        user: e.by ?? null,
        name: e.name,
        roles: e.roles ?? null,
        ...(e.keyId === undefined ? {} : { keyId: e.keyId }),
        remote: e.remote ?? null,
        result: 'accepted',
        at: e.at,
      }),
  });

  return {
    close: async () => {
      unsubscribe();
      // What was counted but not summarised yet is written now, so a flood just before a stop is not lost.
      refusals.close();
      out.close();
    },
  };
}
