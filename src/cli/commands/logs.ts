import { join } from 'node:path';
import { UsageError } from '../../errors.ts';
import { logPath } from '../../process/log-file.ts';
import { followLines, readLastLines } from '../../process/log-tail.ts';
import { instanceKeyArg, parseCommandArgs, wholeNumber } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import { basic, UnknownInstanceError } from '../client/http.ts';
import { onInterrupt } from '../client/interrupt.ts';
import { fetchLogLines, followRemoteLog, type RemoteLog } from '../client/remote-logs.ts';
import { ADMIN_FLAGS, TARGET_FLAGS, type Target, targetOf, warnTo, withInstanceList } from '../client/target.ts';
import type { CommandOptions } from '../registry.ts';

export const usage = `usage: watchdog logs <key> [-f] [-n N] [--config F] [--url URL [--token T | --user U --password P]]
  -f, --follow      keep printing new lines (across rotation) until Ctrl-C
  -n, --lines N     how many of the last lines to print first (default 50; at most 1000 with --url)
  --config F        the appsettings.yml that names the instance folders (default: ./appsettings.yml)
  --url URL         read the log from the daemon at URL (default: WATCHDOG_URL) instead of this machine's files,
                    as the instance (--token, WATCHDOG_TOKEN or the local ApiToken) or as Admin
                    (--user and --password, or WATCHDOG_ADMIN=user:password)`;

export const options = {
  follow: { type: 'boolean', short: 'f' },
  lines: { type: 'string', short: 'n' },
  ...TARGET_FLAGS,
  ...ADMIN_FLAGS,
} as const satisfies CommandOptions;

const write = (line: string) => void process.stdout.write(line + '\n');

/** Runs `body` until Ctrl-C (or a closed pipe: `watchdog logs -f | head` ends like Ctrl-C does). */
async function untilInterrupted(body: (stop: ReturnType<typeof onInterrupt>) => Promise<void>): Promise<number> {
  const stop = onInterrupt();
  process.stdout.once('error', stop.trigger);
  try {
    await body(stop);
  } finally {
    stop.dispose();
    process.stdout.off('error', stop.trigger);
  }
  return 0;
}

/** The tail of `<instance dir>/logs/server.log`, read from this machine's files. */
async function localLogs(target: Target, key: string, n: number, follow: boolean): Promise<number> {
  const config = await target.config('watchdog logs');
  const keys = config.instances.map((i) => i.key);
  const instance = config.instances.find((i) => i.key === key);
  if (!instance) throw new UnknownInstanceError(key, keys);
  const logDir = join(instance.dir, 'logs');
  const tail = await readLastLines(logDir, n);
  for (const line of tail.lines) write(line);
  if (!follow) {
    if (tail.partial !== null) write(tail.partial);
    if (!tail.found)
      process.stderr.write(`watchdog logs: no log yet at ${logPath(logDir)} (has ${key} been started?)\n`);
    return 0;
  }
  if (!tail.found) process.stderr.write(`watchdog logs: waiting for ${logPath(logDir)} to appear\n`);
  return untilInterrupted(async (stop) => void (await followLines(logDir, tail.offset, write, stop.signalled)));
}

/** Admin credentials when given (or a kept login where no token is), else the instance's token; never printed. */
async function remoteAuth(target: Target, key: string): Promise<Pick<RemoteLog, 'authorization' | 'as'>> {
  const admin = target.tokenGiven ? target.admin() : await target.login();
  if (admin) return { authorization: admin.authorization, as: 'admin' };
  if (!target.tokenGiven && !(await target.localConfig())) {
    throw new ClientError(
      `reading ${key}'s log over --url needs its token (--token or WATCHDOG_TOKEN) or Admin credentials (--user and --password, or WATCHDOG_ADMIN)`,
      2,
    );
  }
  return { authorization: basic(key, await target.token(key)), as: 'token' };
}

/** The log through the daemon's `GET /instances/<key>/logs`. */
async function remoteLogs(target: Target, key: string, n: number, follow: boolean): Promise<number> {
  const log: RemoteLog = { url: await target.url(), key, ...(await remoteAuth(target, key)) };
  if (!follow) {
    const got = await withInstanceList(target, () => fetchLogLines(log, n));
    for (const line of got.lines) write(line);
    if (!got.found) process.stderr.write(`watchdog logs: no log yet for ${key} (has it been started?)\n`);
    return 0;
  }
  return untilInterrupted((stop) =>
    withInstanceList(target, () => followRemoteLog(log, n, write, stop, warnTo('logs'))),
  );
}

/** `watchdog logs <key>`: this machine's server.log, or with `--url` (or `WATCHDOG_URL`) the daemon's. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  const [key] = instanceKeyArg(positionals, usage);
  const n = wholeNumber('-n', values.lines, 0, usage) ?? 50;
  const target = targetOf('logs', values);
  const follow = values.follow === true;
  if (!target.urlGiven) return localLogs(target, key, n, follow);
  if (n > 1000) throw new UsageError(`-n: at most 1000 lines over --url, got ${n}\n${usage}`);
  return remoteLogs(target, key, n, follow);
}
