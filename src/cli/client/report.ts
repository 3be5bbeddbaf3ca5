import { ClientError } from './errors.ts';

/**
 * Runs a command body and turns a ClientError into its message on stderr and its exit code.
 * Anything else propagates to the dispatcher (UsageError → exit 2, the rest → exit 1).
 */
export async function reportClientErrors(command: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    process.stderr.write(`watchdog ${command}: ${err.message}\n`);
    return err.exitCode;
  }
}

/** A stderr note that does not stop the command. */
export const warnTo = (command: string) => (message: string) => {
  process.stderr.write(`watchdog ${command}: ${message}\n`);
};
