import { UsageError } from '../../errors.ts';
import { parseCommandArgs, positiveNumber, wholeNumber } from '../client/args.ts';
import { colourEnabled } from '../client/colour.ts';
import { ClientError } from '../client/errors.ts';
import { fetchStatus } from '../client/http.ts';
import { reportClientErrors, warnTo } from '../client/report.ts';
import { renderStatusTable, type StatusRow } from '../client/status-table.ts';
import { createTarget, type Target } from '../client/target.ts';
import { repeatUntilInterrupted } from '../client/watch.ts';

const USAGE = `usage: watchdog status [key] [--json] [--watch] [--interval S] [--count N] [--url URL] [--token T] [--config F]
  key           one instance (default: every instance in the local appsettings.yml, each with its own token)
  --json        print the status JSON (an object for one key, an array otherwise)
  --watch       redraw every --interval seconds (default 2) until Ctrl-C
  --count N     with --watch, stop after N redraws
  --url, --token, --config   as for watchdog restart`;

interface Snapshot {
  rows: StatusRow[];
  errors: ClientError[];
}

/** Fetches every requested status in parallel; one failure does not hide the others. */
async function snapshot(target: Target, key: string | undefined): Promise<Snapshot> {
  const url = await target.url();
  const keys = key !== undefined ? [key] : (await target.config('watchdog status without a key')).instances.map((i) => i.key);
  const results = await Promise.allSettled(keys.map(async (k) => fetchStatus({ url, key: k, token: await target.token(k) })));
  const rows: StatusRow[] = [];
  const errors: ClientError[] = [];
  for (const r of results) {
    if (r.status === 'fulfilled') rows.push(r.value);
    else if (r.reason instanceof ClientError) errors.push(r.reason);
    else throw r.reason;
  }
  // A daemon that is down fails every instance the same way: say it once.
  const unique = errors.filter((e, i) => errors.findIndex((o) => o.message === e.message) === i);
  return { rows, errors: unique };
}

function print(snap: Snapshot, opts: { key: string | undefined; json: boolean; watch: boolean; colour: boolean }): number {
  // One instance asked for once: its failure is the answer. Watching shows it and goes on.
  if (opts.key !== undefined && snap.errors.length > 0 && !opts.watch) throw snap.errors[0];
  // Nothing answered (the daemon is down): the message alone, not an empty table above it.
  const silent = snap.rows.length === 0 && snap.errors.length > 0 && !opts.watch;
  if (silent) {
    // Only the messages below.
  } else if (opts.json) {
    const value = opts.key !== undefined ? snap.rows[0] : snap.rows;
    // Watching prints one document per line so a script can read the stream line by line.
    if (value !== undefined) process.stdout.write((opts.watch ? JSON.stringify(value) : JSON.stringify(value, null, 2)) + '\n');
  } else {
    process.stdout.write(renderStatusTable(snap.rows, { colour: opts.colour, now: Date.now() }));
  }
  for (const e of snap.errors) process.stderr.write(`watchdog status: ${e.message}\n`);
  return snap.errors.reduce<number>((code, e) => Math.max(code, e.exitCode), 0);
}

/** `watchdog status [key]`: a table (or JSON) of instance states from GET /instances/<key>/status. */
export async function run(args: string[]): Promise<number> {
  return reportClientErrors('status', async () => {
    const { values, positionals } = parseCommandArgs(args, {
      json: { type: 'boolean' },
      watch: { type: 'boolean' },
      interval: { type: 'string' },
      count: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      config: { type: 'string' },
    }, USAGE);
    if (positionals.length > 1) throw new UsageError(`unexpected argument "${positionals[1]}"\n${USAGE}`);
    const key = positionals[0];
    const intervalMs = (positiveNumber('--interval', values.interval, USAGE) ?? 2) * 1000;
    const count = wholeNumber('--count', values.count, 1, USAGE);
    const json = values.json === true;
    const watch = values.watch === true;
    const colour = !json && colourEnabled(process.stdout, process.env);
    const target = createTarget({ url: values.url, token: values.token, configFile: values.config, cwd: process.cwd(), env: process.env, warn: warnTo('status') });

    if (!watch) return print(await snapshot(target, key), { key, json, watch, colour });

    const tty = process.stdout.isTTY === true && !json;
    return repeatUntilInterrupted(async (n) => {
      let snap: Snapshot;
      try {
        snap = await snapshot(target, key);
      } catch (err) {
        // A daemon restarting mid-watch is worth showing, not worth ending the watch for.
        if (!(err instanceof ClientError) || err.exitCode === 2) throw err;
        snap = { rows: [], errors: [err] };
      }
      if (tty) process.stdout.write(`\x1b[H\x1b[2J` + `every ${intervalMs / 1000}s · ${new Date().toLocaleTimeString()}\n\n`);
      else if (n > 1 && !json) process.stdout.write('\n');
      return print(snap, { key, json, watch, colour });
    }, { intervalMs, count });
  });
}
