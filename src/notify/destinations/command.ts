import type { Notice } from '../../bus.ts';
import { describeError } from '../../errors.ts';
import { runChild } from '../../process/run-child.ts';
import type { TargetOf } from '../routes.ts';
import { type Attempt, DELIVERED, type Delivery, type DeliveryContext, failed } from '../sender.ts';
import { noticeJson } from './http.ts';

/** sysexits' EX_TEMPFAIL: the command asks to be run again later. Any other failure is final. */
const EX_TEMPFAIL = 75;

/** The notice as `WATCHDOG_NOTICE_*` variables; the daemon's own environment is not passed on (it may hold secrets). */
function noticeEnv(n: Notice, name: string | undefined): Record<string, string> {
  const j = noticeJson(n, name);
  const env: Record<string, string> = {
    WATCHDOG_NOTICE_KEY: j.key,
    WATCHDOG_NOTICE_NAME: name ?? j.key,
    WATCHDOG_NOTICE_KIND: j.kind,
    WATCHDOG_NOTICE_TITLE: j.title,
    WATCHDOG_NOTICE_MESSAGE: j.message,
    WATCHDOG_NOTICE_AT: j.at,
    WATCHDOG_NOTICE_FIELDS: j.fields.map((f) => `${f.name}: ${f.value}`).join('\n'),
  };
  for (const k of ['PATH', 'HOME', 'LANG', 'TZ']) if (process.env[k]) env[k] = process.env[k] as string;
  return env;
}

/**
 * Runs the command (argv as is, no shell) with the notice in its environment and as JSON on stdin, in its own process
 * group, so a timeout (or the daemon stopping) stops whatever it started too. Exit 0 delivered it; 75 and a timeout
 * ask for a retry.
 */
export function commandDelivery(t: TargetOf<'Command'>, n: Notice, ctx: DeliveryContext): Delivery {
  const env = noticeEnv(n, ctx.name);
  const input = `${JSON.stringify(noticeJson(n, ctx.name))}\n`;
  const [program = '', ...args] = t.argv;
  const run = { cwd: process.cwd(), env, input, timeoutMs: ctx.timeoutMs, what: 'the notification command' };
  return async (signal): Promise<Attempt> => {
    try {
      const r = await runChild(program, args, { ...run, signal });
      if (r.code === 0) return DELIVERED;
      const how = r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`;
      const said = r.tail.split('\n').at(-1) ?? '';
      return failed(said ? `${how}: ${said}` : how, r.code === EX_TEMPFAIL);
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof Error && 'timedOut' in err) return failed(`timed out after ${ctx.timeoutMs} ms`, true);
      // A program that cannot start: runChild's error carries the spawn error.
      const cause = err instanceof Error ? err.cause : err;
      return failed(`could not run: ${describeError(cause)}`, false);
    }
  };
}
