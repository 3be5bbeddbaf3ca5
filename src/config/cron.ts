/**
 * Cron schedules of `Maintenance` (croner): 5 fields, or 6 with seconds first, read in an IANA time zone (the
 * host's when none is given). croner handles the DST gaps and repeats, so a schedule fires once per match.
 */
import { Cron } from 'croner';

/** Why `zone` is not a time zone this host knows, or null when it is. */
export function timeZoneProblem(zone: string): string | null {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return null;
  } catch {
    return 'expected an IANA time zone name such as Europe/Berlin or UTC';
  }
}

function cronOf(expression: string, zone: string | undefined): Cron {
  // Paused: only its calendar is used; the daemon arms its own timers.
  return new Cron(expression, { timezone: zone, paused: true, mode: '5-or-6-parts' });
}

/** Why `expression` is not a cron schedule (croner's words), or null when it is. */
export function cronProblem(expression: string): string | null {
  const fields = expression.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6)
    return `expected a cron schedule of 5 fields, or 6 with seconds first, such as "0 6 * * *" (found ${fields})`;
  try {
    cronOf(expression, undefined);
    return null;
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^CronPattern: /, '') : String(err);
    return `expected a cron schedule of 5 fields, or 6 with seconds first, such as "0 6 * * *" (${why})`;
  }
}

/** The first time after `from` (ms) the schedule fires, in ms, or null when it never does again. */
export function nextFire(expression: string, zone: string | undefined, from: number): number | null {
  const next = cronOf(expression, zone).nextRun(new Date(from));
  return next === null ? null : next.getTime();
}
