import { UsageError } from '../../errors.ts';
import type { ControlAction } from '../../supervisor/contract.ts';
import { parseCommandArgs } from '../client/args.ts';
import { downloadLine, followOutcome } from '../client/follow.ts';
import { fetchStatus, postControl } from '../client/http.ts';
import { withInstanceList } from '../client/instance-sources.ts';
import { reportClientErrors } from '../client/report.ts';
import type { StatusRow } from '../client/status-table.ts';
import type { Command, CommandOptions } from '../registry.ts';
import { TARGET_FLAGS, targetOf } from './target-flags.ts';

const DEFAULT_TIMEOUT_S = 300;

/** `--when` applies to restart and update only: a stop or a rollback is never put off to a round end. */
const takesWhen = (action: string) => action === 'restart' || action === 'update';

export const usage = (action: string) =>
  [
    `usage: watchdog ${action} <key>${takesWhen(action) ? ' [--when W]' : ''} [--wait [--timeout S]] [--url URL] [--token T] [--config F] [--json]`,
    ...(takesWhen(action)
      ? [
          '  --when W      Now, RoundEnd (the server leaves when its round ends) or Empty (once it reports 0 players);',
          '                forced after Maintenance.MaxDelayMinutes. Without it a restart is immediate',
        ]
      : []),
    `  --wait        follow the instance until the outcome (running again with a new pid, stopped, or failed and why),
                print it with the time it took; exit 1 on failure
  --timeout S   with --wait, give up after S seconds (default ${DEFAULT_TIMEOUT_S}; exit 1)
  --url URL     the watchdog's address (default: WATCHDOG_URL, else Urls from appsettings.yml, else http://localhost:5000)
  --token T     the instance's ApiToken (default: WATCHDOG_TOKEN, else the local appsettings.yml)
  --config F    the appsettings.yml to read the address and token from
  --json        print the outcome as JSON`,
  ].join('\n');

export const options = {
  ...TARGET_FLAGS,
  json: { type: 'boolean' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  when: { type: 'string' },
} as const satisfies CommandOptions;

const POLICIES = ['Now', 'RoundEnd', 'Empty'];

/**
 * `watchdog restart|update|stop|rollback <key>`: POST /instances/<key>/<action> as Basic `<key>:<token>`.
 * The daemon queues the action and answers at once (409 with the reason when it cannot be done now); with `--wait`
 * the command follows the instance's status until the outcome.
 */
export function control(action: ControlAction): Command {
  return (args) =>
    reportClientErrors(action, async () => {
      const { values, positionals } = parseCommandArgs(args, options, usage(action));
      const [key, ...extra] = positionals;
      if (key === undefined) throw new UsageError(`missing the instance key\n${usage(action)}`);
      if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"\n${usage(action)}`);

      const timeoutS = values.timeout === undefined ? DEFAULT_TIMEOUT_S : Number(values.timeout);
      if (!Number.isFinite(timeoutS) || timeoutS <= 0)
        throw new UsageError(`--timeout takes a number of seconds, not "${values.timeout ?? ''}"\n${usage(action)}`);
      if (values.timeout !== undefined && !values.wait)
        throw new UsageError(`--timeout goes with --wait\n${usage(action)}`);

      if (values.when !== undefined && !POLICIES.includes(values.when))
        throw new UsageError(`--when takes ${POLICIES.join(', ')}, not "${values.when}"\n${usage(action)}`);
      if (values.when !== undefined && !takesWhen(action))
        throw new UsageError(`--when goes with restart and update only\n${usage(action)}`);
      const query: Record<string, string> = values.when === undefined ? {} : { when: values.when };
      const target = targetOf(action, values);
      const url = await target.url();
      if (!values.wait) {
        await withInstanceList(target, async () =>
          postControl({ url, key, token: await target.token(key) }, action, undefined, query),
        );
        if (values.json) process.stdout.write(JSON.stringify({ key, action, ok: true, url }) + '\n');
        else process.stdout.write(`${action} requested for ${key} at ${url}\n`);
        return 0;
      }
      const startedAt = Date.now();
      const ep = { url, key, token: '' };
      const before = await withInstanceList(target, async () => {
        ep.token = await target.token(key);
        const status = await fetchStatus(ep);
        await postControl(ep, action, undefined, query);
        return status;
      });
      if (!values.json) process.stdout.write(`${action} requested for ${key} at ${url}; waiting for the outcome…\n`);
      // On a terminal, a running download is shown in place (bytes, rate, time left); never in a pipe or --json.
      const progress = !values.json && process.stderr.isTTY === true;
      let shown = false;
      const onStatus = (s: StatusRow) => {
        const line = downloadLine(s);
        if (line !== null) process.stderr.write(`\r\x1b[K${line}`);
        else if (shown) process.stderr.write('\r\x1b[K');
        shown = line !== null;
      };
      const outcome = await followOutcome(ep, action, before, {
        timeoutMs: timeoutS * 1000,
        startedAt,
        ...(progress ? { onStatus } : {}),
      }).finally(() => {
        if (shown) process.stderr.write('\r\x1b[K');
      });
      const seconds = Math.round(outcome.ms / 100) / 10;
      if (values.json) {
        const { state, pid, revision, lastExit } = outcome.status;
        process.stdout.write(
          JSON.stringify({
            key,
            action,
            ok: outcome.ok,
            outcome: outcome.text,
            state,
            pid,
            revision,
            lastExit,
            seconds,
            url,
          }) + '\n',
        );
      } else {
        process.stdout.write(`${action} of ${key} ${outcome.ok ? 'done' : 'failed'}: ${outcome.text} (${seconds} s)\n`);
      }
      return outcome.ok ? 0 : 1;
    });
}
