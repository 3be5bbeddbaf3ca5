import { parseCommandArgs, positiveNumber, wholeNumber } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import { fetchAllStatus, fetchStatus, refusal, UnknownInstanceError } from '../client/http.ts';
import { onInterrupt } from '../client/interrupt.ts';
import { colourEnabled, renderStatusTable, type StatusRow } from '../client/status-table.ts';
import { ADMIN_FLAGS, atInstance, TARGET_FLAGS, type Target, targetOf } from '../client/target.ts';
import type { CommandOptions } from '../registry.ts';

export const usage = `usage: watchdog status [key] [--json] [--watch] [--interval S] [--count N] [--url URL] [--token T] [--config F] [--user U --password P]
  key           one instance (default: every instance: all the daemon's with Admin credentials, else each one
                in the local appsettings.yml with its own token)
  --json        print the status JSON (an object for one key, an array otherwise)
  --watch       redraw every --interval seconds until Ctrl-C
  --interval S  with --watch, seconds between redraws (default 2; fractions allowed)
  --count N     with --watch, stop after N redraws
  --user U      the daemon's Admin user, with --password P (default: WATCHDOG_ADMIN=user:password, which keeps
                the password out of the process list); they list every instance, with or without a local config
  --url URL, --token T, --config F   as for watchdog restart`;

export const options = {
  json: { type: 'boolean' },
  watch: { type: 'boolean' },
  interval: { type: 'string' },
  count: { type: 'string' },
  ...TARGET_FLAGS,
  ...ADMIN_FLAGS,
} as const satisfies CommandOptions;

const NEEDS_ADMIN =
  'listing every instance needs Admin credentials (--user and --password, or WATCHDOG_ADMIN=user:password) ' +
  "or the daemon's appsettings.yml here; an instance token shows only its own instance: watchdog status <key>";

type Snapshot = { rows: StatusRow[]; errors: ClientError[] };

/** Every instance's status from `GET /api/instances` (one of them with `key`), as Admin or a loopback client. */
async function adminSnapshot(
  url: string,
  target: Target,
  key: string | undefined,
  explicit: boolean,
): Promise<Snapshot> {
  let rows: StatusRow[];
  try {
    rows = await fetchAllStatus(url, await target.login());
  } catch (err) {
    // Without credentials this was only a try (a daemon on this machine without Admin answers it).
    const { status } = refusal(err);
    if (!explicit && (status === 401 || status === 403)) throw new ClientError(NEEDS_ADMIN, 2, { cause: err });
    throw err;
  }
  if (key === undefined) return { rows, errors: [] };
  const row = rows.find((r) => r.key === key);
  const keys = rows.map((r) => r.key);
  return row ? { rows: [row], errors: [] } : { rows: [], errors: [new UnknownInstanceError(key, keys)] };
}

/** Fetches every requested status in parallel; one failure does not hide the others. */
async function snapshot(target: Target, key: string | undefined): Promise<Snapshot> {
  const url = await target.url();
  // Admin credentials, or a kept login where no token was given: the daemon's list, as far as they may read it.
  if (target.admin() || (!target.tokenGiven && (await target.login()))) return adminSnapshot(url, target, key, true);
  // Without Admin credentials: the key given, else every instance of the local config, else the daemon's list.
  const keys = key !== undefined ? [key] : (await target.localConfig())?.instances.map((i) => i.key);
  if (keys === undefined && target.tokenGiven) throw new ClientError(NEEDS_ADMIN, 2);
  if (keys === undefined) return adminSnapshot(url, target, key, false);
  const results = await Promise.allSettled(keys.map((k) => atInstance(target, k, fetchStatus)));
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

function print(
  snap: Snapshot,
  opts: { key: string | undefined; json: boolean; watch: boolean; colour: boolean },
): number {
  // One instance asked for once: its failure is the answer. Watching shows it and goes on.
  if (opts.key !== undefined && snap.errors.length > 0 && !opts.watch) throw snap.errors[0];
  if (snap.rows.length === 0 && snap.errors.length > 0 && !opts.watch) {
    // Nothing answered (the daemon is down): the message alone, not an empty table above it.
  } else if (opts.json) {
    const value = opts.key !== undefined ? snap.rows[0] : snap.rows;
    // Watching prints one document per line so a script can read the stream line by line.
    if (value !== undefined)
      process.stdout.write((opts.watch ? JSON.stringify(value) : JSON.stringify(value, null, 2)) + '\n');
  } else {
    process.stdout.write(renderStatusTable(snap.rows, { colour: opts.colour, now: Date.now() }));
  }
  for (const e of snap.errors) process.stderr.write(`watchdog status: ${e.message}\n`);
  return snap.errors.reduce<number>((code, e) => Math.max(code, e.exitCode), 0);
}

/** `watchdog status [key]`: a table (or JSON) of instance states from GET /instances/<key>/status. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage, 1);
  const key = positionals[0];
  const intervalMs = (positiveNumber('--interval', values.interval, usage) ?? 2) * 1000;
  const count = wholeNumber('--count', values.count, 1, usage);
  const json = values.json === true;
  const watch = values.watch === true;
  const colour = !json && colourEnabled(process.stdout, process.env);
  const target = targetOf('status', values);
  target.admin(); // half-given credentials are a usage error before anything is sent

  if (!watch) return print(await snapshot(target, key), { key, json, watch, colour });

  const tty = process.stdout.isTTY === true && !json;
  // Until Ctrl-C (exit 0: the person asked to stop) or `count` draws (the last one's exit code).
  const stop = onInterrupt();
  let code = 0;
  try {
    for (let n = 1; !stop.interrupted && (count === undefined || n <= count); n++) {
      let snap: Snapshot;
      try {
        snap = await snapshot(target, key);
      } catch (err) {
        // A daemon restarting mid-watch is worth showing, not worth ending the watch for.
        if (!(err instanceof ClientError) || err.exitCode === 2) throw err;
        snap = { rows: [], errors: [err] };
      }
      if (tty)
        process.stdout.write(`\x1b[H\x1b[2J` + `every ${intervalMs / 1000}s · ${new Date().toLocaleTimeString()}\n\n`);
      else if (n > 1 && !json) process.stdout.write('\n');
      code = print(snap, { key, json, watch, colour });
      if (stop.interrupted || n === count) break;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([stop.signalled, new Promise<void>((r) => (timer = setTimeout(r, intervalMs)))]);
      clearTimeout(timer);
    }
  } finally {
    stop.dispose();
  }
  return stop.interrupted ? 0 : code;
}
