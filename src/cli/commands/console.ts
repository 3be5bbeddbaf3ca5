import { createInterface } from 'node:readline';
import { UsageError } from '../../errors.ts';
import { parseCommandArgs, positiveNumber } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import { instancePath, refusal, request } from '../client/http.ts';
import { type Interruption, onInterrupt } from '../client/interrupt.ts';
import { followRemoteLog, type RemoteLog } from '../client/remote-logs.ts';
import { TARGET_FLAGS, TARGET_USAGE, targetOf, warnTo, withInstanceList } from '../client/target.ts';
import type { CommandOptions } from '../registry.ts';

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
    const { status, said } = refusal(err);
    // The daemon's own refusals of a command (off, invalid, not running, too many) are said as it said them.
    if (typeof said === 'string' && status !== undefined && [400, 403, 409, 413, 429].includes(status))
      throw new ClientError(`console refused for instance ${log.key} (${status}): ${said}`, 1, { cause: err });
    throw err;
  }
}

/** Follows the log, runs `send` once the stream is open, then prints output until QUIET_MS of quiet or `waitMs`. */
async function session(log: RemoteLog, waitMs: number, send: (stop: Interruption) => Promise<number>) {
  const stop = onInterrupt();
  let quiet: NodeJS.Timeout | undefined;
  let cap: NodeJS.Timeout | undefined;
  let settling = false;
  const heard = () => {
    if (!settling) return;
    clearTimeout(quiet);
    quiet = setTimeout(stop.trigger, QUIET_MS);
  };
  try {
    let opened: () => void = () => {};
    const open = new Promise<void>((resolve) => (opened = resolve));
    const onLine = (line: string) => {
      write(line);
      heard();
    };
    const following = followRemoteLog(log, 0, onLine, stop, warnTo('console'), opened);
    // A follow that fails before it opens (refused, unreachable) ends the wait too, and says why.
    await Promise.race([open, following]);
    const code = await send(stop);
    settling = true;
    cap = setTimeout(stop.trigger, waitMs);
    heard();
    await following;
    return code;
  } finally {
    clearTimeout(quiet);
    clearTimeout(cap);
    stop.trigger();
    stop.dispose();
  }
}

/** One command, then its output. */
const sendOne = (log: RemoteLog, command: string, waitMs: number) =>
  session(log, waitMs, async (stop) => {
    await postCommand(log, command).catch((err: unknown) => {
      stop.trigger();
      throw err;
    });
    return 0;
  });

/** The prompt: each line typed is sent; the server's output is printed as it comes; Ctrl-D ends it. */
const interactive = (log: RemoteLog, waitMs: number) =>
  session(log, waitMs, async () => {
    // Made only now: readline's iterator loses what is read before the loop starts (piped input, its end).
    const tty = process.stdin.isTTY === true;
    const rl = createInterface({ input: process.stdin, output: tty ? process.stdout : undefined, terminal: tty });
    let refused = 0;
    try {
      rl.on('SIGINT', () => rl.close());
      const prompt = () => (tty ? rl.prompt() : undefined);
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
    } finally {
      rl.close();
    }
    // End of input (Ctrl-D, or the end of piped commands): the last command's answer is still shown.
    return refused > 0 ? 1 : 0;
  });

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
