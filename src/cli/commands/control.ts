import { takesOption } from '../../../machines/instance.refusals.ts';
import { MAINTENANCE_POLICIES } from '../../../machines/instance.types.ts';
import { monotonicMs } from '../../clock.ts';
import { UsageError } from '../../errors.ts';
import type { ControlAction } from '../../supervisor/contract.ts';
import { instanceKeyArg, parseCommandArgs, positiveNumber } from '../client/args.ts';
import { downloadLine, followOutcome } from '../client/follow.ts';
import { type Endpoint, fetchBackups, fetchStatus, postControl } from '../client/http.ts';
import type { StatusRow } from '../client/status-table.ts';
import { atInstance, TARGET_FLAGS, TARGET_USAGE, targetOf } from '../client/target.ts';
import type { Command, CommandOptions } from '../registry.ts';

const DEFAULT_TIMEOUT_S = 300;

const ARGS: Record<string, string> = {
  restart: '<key> [--when W]',
  update: '<key> [--when W]',
  rollback: '<key> [--with-data]',
  restore: '<key> <backup> [--when W | --now]',
};

const WHAT: Record<string, string[]> = {
  restart: [
    '  --when W      Now, RoundEnd (the server leaves when its round ends) or Empty (once it reports 0 players);',
    '                forced after Maintenance.MaxDelayMinutes. Without it a restart is immediate',
  ],
  rollback: [
    '  Puts the previous build back (a running server is stopped gracefully first) and starts it.',
    '  --with-data   also put back the data snapshot taken just before the installed build was installed (the',
    '                current data is snapshotted first, as before-restore); refused when there is none. Without it',
    '                the data stays as it is, and the command says which snapshot --with-data would put back',
  ],
  restore: [
    '  Stops the server gracefully at the moment Maintenance.When names (by default its round end), snapshots its',
    '  current data (kind before-restore), puts <backup> back (an id from `watchdog backups <key>`) and starts it.',
    '  --when W      Now, RoundEnd or Empty instead, as for a restart; forced after Maintenance.MaxDelayMinutes',
    '  --now         the same as --when Now: stop the server gracefully at once',
  ],
};
WHAT.update = WHAT.restart ?? [];

export const usage = (action: string) =>
  [
    `usage: watchdog ${action} ${ARGS[action] ?? '<key>'} [--wait [--timeout S]] [--url URL] [--token T] [--config F] [--json]`,
    ...(WHAT[action] ?? []),
    `  --wait        follow the instance until the outcome (running again with a new pid, stopped, or failed and why),
                print it with the time it took; exit 1 on failure
  --timeout S   with --wait, give up after S seconds (default ${DEFAULT_TIMEOUT_S}; exit 1)
${TARGET_USAGE}
  --json        print the outcome as JSON`,
  ].join('\n');

export const options = {
  ...TARGET_FLAGS,
  json: { type: 'boolean' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  when: { type: 'string' },
  'with-data': { type: 'boolean' },
  now: { type: 'boolean' },
} as const satisfies CommandOptions;

/** `watchdog restart|update|stop|rollback|restore <key>`: the daemon queues it and answers at once (409: not now). */
export function control(action: ControlAction): Command {
  return async (args) => {
    const { values, positionals } = parseCommandArgs(args, options, usage(action));
    const missing = (key: string) => `missing the backup to restore (watchdog backups ${key} lists them)`;
    const [key, backup] = instanceKeyArg(positionals, usage(action), action === 'restore' ? { missing } : undefined);
    const withData = values['with-data'] === true;
    if (values.now && action !== 'restore') throw new UsageError(`--now goes with restore only\n${usage(action)}`);
    if (values.now && values.when !== undefined) throw new UsageError(`--now or --when, not both\n${usage(action)}`);
    if (values.now) values.when = 'Now';
    if (withData && !takesOption(action, 'withData'))
      throw new UsageError(`--with-data goes with rollback only\n${usage(action)}`);

    const timeoutS = positiveNumber('--timeout', values.timeout, usage(action)) ?? DEFAULT_TIMEOUT_S;
    if (values.timeout !== undefined && !values.wait)
      throw new UsageError(`--timeout goes with --wait\n${usage(action)}`);

    const policies: readonly string[] = MAINTENANCE_POLICIES;
    if (values.when !== undefined && !policies.includes(values.when))
      throw new UsageError(`--when takes ${policies.join(', ')}, not "${values.when}"\n${usage(action)}`);
    if (values.when !== undefined && !takesOption(action, 'when'))
      throw new UsageError(`--when goes with restart, update and restore only\n${usage(action)}`);
    const query: Record<string, string> = {
      ...(values.when === undefined ? {} : { when: values.when }),
      ...(withData ? { withData: 'true' } : {}),
      ...(backup === undefined ? {} : { backup }),
    };
    const { ep, before, hint, startedAt } = await atInstance(targetOf(action, values), key, async (ep) => {
      const startedAt = monotonicMs();
      const before = values.wait ? await fetchStatus(ep) : null;
      // Asked before the rollback: after it, the installed build is another one and the answer would be too.
      const hint = action === 'rollback' && !withData && !values.json ? await dataHint(ep) : null;
      await postControl(ep, action, query);
      return { ep, before, hint, startedAt };
    });
    const { url } = ep;
    if (!before) {
      if (values.json) process.stdout.write(JSON.stringify({ key, action, ok: true, url }) + '\n');
      else process.stdout.write(`${action} requested for ${key} at ${url}\n${hint ?? ''}`);
      return 0;
    }
    if (!values.json)
      process.stdout.write(`${action} requested for ${key} at ${url}; waiting for the outcome…\n${hint ?? ''}`);
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
      const { ok, text } = outcome;
      const { state, pid, revision, lastExit } = outcome.status;
      const result = { key, action, ok, outcome: text, state, pid, revision, lastExit, seconds, url };
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } else {
      process.stdout.write(`${action} of ${key} ${outcome.ok ? 'done' : 'failed'}: ${outcome.text} (${seconds} s)\n`);
    }
    return outcome.ok ? 0 : 1;
  };
}

/** Which snapshot `--with-data` would have put back; null when the daemon cannot say (the rollback is what counts). */
async function dataHint(ep: Endpoint): Promise<string | null> {
  const list = await fetchBackups(ep).catch(() => null);
  if (list === null) return null;
  const match = list.find((b) => b.forRollback === true);
  return match
    ? `the data stays as it is; backup ${match.id} (taken before ${match.revisionAfter ?? 'the build'} was installed) holds the data of the build it goes back to: \`watchdog restore ${ep.key} ${match.id}\` puts it back\n`
    : 'the data stays as it is (no snapshot was taken before the installed build was installed)\n';
}

export const startInstanceUsage = `usage: watchdog start <key> [--wait [--timeout S]] [--url URL] [--token T] [--config F] [--json]
  Starts a stopped instance (one an operator stopped stays stopped across daemon restarts): the same request as
  \`watchdog restart <key>\`, sent only when the instance is stopped; a running one is left alone. Options as for
  watchdog restart.`;

/** `watchdog start <key>`, as a PM2 or systemd user undoes a stop: a restart, refused for an instance that runs. */
export async function startInstance(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, startInstanceUsage);
  const key = positionals[0] ?? '';
  const status = await atInstance(targetOf('start', values), key, fetchStatus);
  if (!status.state.startsWith('stopped.')) {
    process.stdout.write(
      `${key} is ${status.state}, not stopped; nothing to start (watchdog restart ${key} restarts it)\n`,
    );
    return 0;
  }
  return control('restart')(args);
}
