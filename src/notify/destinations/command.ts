import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Notice } from '../../bus.ts';
import type { TargetOf } from '../routes.ts';
import type { Attempt, Delivery, DeliveryContext } from '../sender.ts';
import { noticeJson } from './http.ts';

/** What of a command's output is kept, for the log line when it fails; the rest is read and dropped. */
const OUTPUT_CAP = 2000;
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

/** Reads a stream to its end, keeping the first `OUTPUT_CAP` characters. */
const capped = (s: Readable, into: { text: string }) =>
  s.on('data', (d: Buffer) => {
    if (into.text.length < OUTPUT_CAP) into.text += d.toString('utf8').slice(0, OUTPUT_CAP - into.text.length);
  });

/**
 * Runs the command (argv as is, no shell) with the notice in its environment and as JSON on stdin, in its own process
 * group, so a timeout (or the daemon stopping) kills whatever it started too. Exit 0 delivered it; 75 asks for a retry.
 */
export function commandDelivery(t: TargetOf<'Command'>, n: Notice, ctx: DeliveryContext): Delivery {
  const env = noticeEnv(n, ctx.name);
  const input = `${JSON.stringify(noticeJson(n, ctx.name))}\n`;
  const [program = '', ...args] = t.argv;
  return (signal) =>
    new Promise<Attempt>((resolve) => {
      const child = spawn(program, args, { env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      const output = { text: '' };
      capped(child.stdout, output);
      capped(child.stderr, output);
      child.stdin.on('error', () => undefined); // a command that does not read its stdin is fine
      child.stdin.end(input);
      let timedOut = false;
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, ctx.timeoutMs);
      signal.addEventListener('abort', killGroup, { once: true });
      const done = (a: Attempt) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', killGroup);
        resolve(a);
      };
      child.on('error', (err) =>
        done({ ok: false, retryable: false, retryAfterMs: null, problem: `could not run: ${err.message}` }),
      );
      child.on('exit', (code, sig) => {
        // Its output may still be arriving; a helper it left behind holding the pipes must not hold up the queue.
        const grace = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
        }, 1000);
        child.once('close', () => {
          clearTimeout(grace);
          if (code === 0) return done({ ok: true, retryable: false, retryAfterMs: null, problem: '' });
          const how = timedOut ? `timed out after ${ctx.timeoutMs} ms` : sig ? `killed by ${sig}` : `exit code ${code}`;
          const said = output.text.trim().split('\n').at(-1) ?? '';
          done({
            ok: false,
            retryable: timedOut || code === EX_TEMPFAIL,
            retryAfterMs: null,
            problem: said ? `${how}: ${said}` : how,
          });
        });
      });
    });
}
