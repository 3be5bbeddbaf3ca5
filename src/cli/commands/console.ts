import { createInterface } from 'node:readline';
import { FetchError } from 'ofetch';
import { UsageError } from '../../errors.ts';
import { parseCommandArgs, positiveNumber } from '../client/args.ts';
import { ClientError, instancePath, request } from '../client/http.ts';
import { type Interruption, onInterrupt } from '../client/interrupt.ts';
import { followRemoteLog, type RemoteLog } from '../client/remote-logs.ts';
import { withInstanceList } from '../client/target.ts';
import type { CommandOptions } from '../registry.ts';
import { TARGET_FLAGS, TARGET_USAGE, targetOf, warnTo } from './target-flags.ts';

const DEFAULT_WAIT_S = 10;
/** After a command, its answer is taken to be complete once the log has been quiet this long. */
const QUIET_MS = 2000;

export const usage = `usage: watchdog console <key> [command …] [--wait S] [--url URL] [--token T] [--config F]
  With a command: send it to the server's console and print the server's log lines that follow, until the log
  has been quiet for ${QUIET_MS / 1000} s or S seconds have passed (--wait, default ${DEFAULT_WAIT_S}).
  Without one: a prompt that sends each line you type (or pipe in) and shows the server's output as it comes,
  until Ctrl-D or the end of input (then as above for the last command's output).
  Put -- before a command with words that start with - (watchdog console main -- ban -p …).
  The instance needs Console: true (full server-console rights); exit 1 when the daemon refuses the command.
${TARGET_USAGE}`;

export const options = { ...TARGET_FLAGS, wait: { type: 'string' } } as const satisfies CommandOptions;

const write = (line: string) => void process.stdout.write(`${line}\n`);

/** `POST /instances/<key>/console`; a refusal becomes a ClientError with the daemon's reason (exit 1). */
async function postCommand(log: RemoteLog, command: string): Promise<void> {
  try {
    await request(instancePath(log, 'console'), log, 'console', {
      method: 'POST',
      authorization: log.authorization,
      body: { command },
    });
  } catch (err) {
    const cause = err instanceof ClientError ? err.cause : undefined;
    const reason: unknown =
      cause instanceof FetchError ? (cause.data as { error?: unknown } | undefined)?.error : undefined;
    const status = cause instanceof FetchError ? cause.status : undefined;
    // The daemon's own refusals of a command (off, invalid, not running, too many) are said as it said them.
    if (typeof reason === 'string' && status !== undefined && [400, 403, 409, 413, 429].includes(status))
      throw new ClientError(`console refused for instance ${log.key} (${status}): ${reason}`, 1, { cause });
    throw err;
  }
}

/**
 * Follows the log from now on; resolves once the stream is open, with the promise of its end (in an object: an
 * async function returning a promise would wait for it).
 */
async function startFollowing(
  log: RemoteLog,
  stop: Interruption,
  onLine: (line: string) => void,
): Promise<{ following: Promise<void> }> {
  let opened: () => void = () => {};
  const open = new Promise<void>((resolve) => (opened = resolve));
  const following = followRemoteLog(log, 0, onLine, stop, warnTo('console'), opened);
  // A follow that fails before it opens (refused, unreachable) ends the wait too, and says why.
  await Promise.race([open, following]);
  return { following };
}

/**
 * Ends the follow once the log has been quiet for QUIET_MS after `settle()`, or `waitMs` after it at the latest:
 * the output of the last command sent is then taken to be complete.
 */
function quietEnd(stop: Interruption) {
  let quiet: NodeJS.Timeout | undefined;
  let cap: NodeJS.Timeout | undefined;
  let settling = false;
  return {
    heard: () => {
      if (!settling) return;
      clearTimeout(quiet);
      quiet = setTimeout(stop.trigger, QUIET_MS);
    },
    settle(waitMs: number) {
      settling = true;
      cap = setTimeout(stop.trigger, waitMs);
      this.heard();
    },
    dispose() {
      clearTimeout(quiet);
      clearTimeout(cap);
    },
  };
}

/** One command, then its output until quiet or `waitMs`. */
async function sendOne(log: RemoteLog, command: string, waitMs: number): Promise<number> {
  const stop = onInterrupt();
  const end = quietEnd(stop);
  try {
    const { following } = await startFollowing(log, stop, (line) => {
      write(line);
      end.heard();
    });
    await postCommand(log, command).catch((err: unknown) => {
      stop.trigger();
      throw err;
    });
    end.settle(waitMs);
    await following;
    return 0;
  } finally {
    end.dispose();
    stop.trigger();
    stop.dispose();
  }
}

/** The prompt: each line typed is sent; the server's output is printed as it comes; Ctrl-D ends it. */
async function interactive(log: RemoteLog, waitMs: number): Promise<number> {
  const stop = onInterrupt();
  const end = quietEnd(stop);
  let refused = 0;
  let rl: ReturnType<typeof createInterface> | undefined;
  try {
    const { following } = await startFollowing(log, stop, (line) => {
      write(line);
      end.heard();
    });
    // Made only now: readline's iterator loses what is read before the loop starts (piped input, its end).
    const tty = process.stdin.isTTY === true;
    rl = createInterface({ input: process.stdin, output: tty ? process.stdout : undefined, terminal: tty });
    rl.on('SIGINT', () => rl?.close());
    const prompt = () => (tty ? rl?.prompt() : undefined);
    rl.setPrompt(`${log.key}> `);
    prompt();
    for await (const line of rl) {
      if (line.trim() !== '') {
        await postCommand(log, line).catch((err: unknown) => {
          if (!(err instanceof ClientError)) throw err;
          refused++;
          warnTo('console')(err.message);
        });
      }
      prompt();
    }
    // End of input (Ctrl-D, or the end of piped commands): the last command's answer is still shown.
    end.settle(waitMs);
    await following;
    return refused > 0 ? 1 : 0;
  } finally {
    end.dispose();
    rl?.close();
    stop.trigger();
    stop.dispose();
  }
}

/** `watchdog console <key> [command …]`: the server console through the daemon, as the instance. */
export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, options, usage);
  const [key, ...words] = positionals;
  if (key === undefined) throw new UsageError(`missing the instance key\n${usage}`);
  const waitS = positiveNumber('--wait', values.wait, usage) ?? DEFAULT_WAIT_S;
  const target = targetOf('console', values);
  const url = await target.url();
  const log: RemoteLog = { url, key, authorization: await target.authorization(key), as: 'token' };
  return withInstanceList(target, () =>
    words.length > 0 ? sendOne(log, words.join(' '), waitS * 1000) : interactive(log, waitS * 1000),
  );
}
