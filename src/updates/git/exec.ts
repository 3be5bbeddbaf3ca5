import { UpdateError } from '../../errors.ts';
import { lastLines, type RunOptions, type RunResult, runChild as runProcess } from '../../process/run-child.ts';

/**
 * The Git provider's child processes (git, the build): a failure is an UpdateError, as every failed step of an
 * update is. Credentials travel in the environment (git/remote.ts).
 */

export type { RunOptions, RunResult };

/** Runs `program args`; resolves with the exit status, rejects with UpdateError on spawn failure, timeout or cancel. */
export const runChild = (program: string, args: string[], opts: RunOptions): Promise<RunResult> =>
  runProcess(program, args, { ...opts, error: (message, options) => new UpdateError(message, options) });

/** Like `runChild`, but a non-zero exit is an UpdateError quoting the end of the output. */
export async function runChecked(
  program: string,
  args: string[],
  opts: RunOptions & { logHint?: string },
): Promise<RunResult> {
  const result = await runChild(program, args, opts);
  if (result.code !== 0) {
    const status = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
    const output = result.tail ? `; its output ended with:\n${lastLines(result.tail, 8)}` : '';
    const hint = opts.logHint ? `\n(full output in ${opts.logHint})` : '';
    throw new UpdateError(`${opts.what} ${status}${output}${hint}`);
  }
  return result;
}
