import { atMemoryLimit } from '../../machines/instance.context.ts';
import type { ExitInfo, InstanceEmitted } from '../../machines/instance.types.ts';

export type AlertEvent = Extract<InstanceEmitted, { type: 'alert' }>;

const CHECK_LOGS = 'Check server logs for possible causes.';

/** `exit code 3`, `signal SIGKILL`; null for an unknown status. */
export function describeExit(exit: ExitInfo | null): string | null {
  if (!exit) return null;
  if (exit.signal) return `signal ${exit.signal}`;
  if (exit.code !== null) return `exit code ${exit.code}`;
  return null;
}

/** The reason in a chat message: one line, at most 200 characters, in backticks (a backtick inside would end them). */
function quotedDetail(detail: string | null): string | null {
  if (!detail) return null;
  const line = detail.replace(/\s+/g, ' ').trim().replace(/`/g, "'");
  return `\`${line.length > 200 ? `${line.slice(0, 197)}...` : line}\``;
}

/**
 * Who asked for a control action, from its audit record: `by boss from 10.0.0.5`; a request made with the
 * instance's own token (its user is the key) `with its API token from 127.0.0.1`; '' when nothing is known.
 */
export function requester(key: string, user: string | undefined, remote: string | undefined): string {
  const who = user === undefined ? '' : user === key ? 'with its API token' : `by ${user}`;
  const from = remote === undefined ? '' : `from ${remote}`;
  return [who, from].filter(Boolean).join(' ');
}

/** `800 ms`, `4 s`, `1.5 s`, `2 min`, `2 min 30 s`. */
export function formatDelay(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const seconds = Math.round(ms / 100) / 10;
  if (seconds < 120) return `${seconds} s`;
  const whole = Math.round(seconds);
  const min = Math.floor(whole / 60);
  const rest = whole % 60;
  return rest === 0 ? `${min} min` : `${min} min ${rest} s`;
}

/**
 * The chat message for an alert, naming the instance key in backticks (a fixed format people and scripts may
 * search for). Texts follow the real watchdog's (`ServerInstance.cs`, `ServerInstance.Actor.cs`) with its
 * "timed and will be killed" typo fixed and the exit status in words rather than a C# record dump.
 */
export function alertMessage(key: string, e: AlertEvent, stoppedBy?: string): string {
  const server = `Server \`${key}\``;
  const exit = describeExit(e.exit);
  const detail = quotedDetail(e.detail);
  // With the server's last line the cause is usually in it; the logs still hold the rest.
  const checkLogs = detail ? `Last output: ${detail}. ${CHECK_LOGS}` : CHECK_LOGS;
  switch (e.kind) {
    case 'crash':
      if (e.exit?.memoryLimitMB !== undefined)
        return `${server} was ${atMemoryLimit(e.exit.memoryLimitMB)}. ${CHECK_LOGS}`;
      if (e.exit?.signal) return `${server} exited with signal ${e.exit.signal}. ${checkLogs}`;
      if (e.exit && e.exit.code !== null)
        return `${server} exited with non-clean exit code ${e.exit.code}. ${checkLogs}`;
      return `${server} exited unexpectedly. ${checkLogs}`;
    case 'hang':
      return `${server} timed out and will be killed. ${CHECK_LOGS}`;
    case 'failing': {
      const attempts = `${e.failures} attempt${e.failures === 1 ? '' : 's'}`;
      // A spawn failure has no exit status: the program never ran; its detail says why (a missing RunCommand).
      const status = exit ?? 'could not be launched';
      const last = detail ? `${status}${exit ? ',' : ':'} ${detail}` : status;
      return `${server} is failing to start (${attempts}, last: ${last}), needs manual intervention or update.`;
    }
    case 'stopped':
      // Information, not an alert: someone asked for it; say who, when known.
      return stoppedBy ? `${server} was stopped on request (${stoppedBy}).` : `${server} was stopped on request.`;
    case 'crash-loop':
    case 'hang-loop': {
      const next = e.backoffMs === null ? '' : ` (next in ${formatDelay(e.backoffMs)})`;
      const how = e.kind === 'crash-loop' ? 'is crash-looping' : 'keeps hanging';
      return `${server} ${how}; restarting with back-off${next}.`;
    }
  }
}
