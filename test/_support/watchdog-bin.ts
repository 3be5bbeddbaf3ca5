import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './env.ts';

export interface BinResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `bin/watchdog …args` as a real process from `cwd`; resolves (never rejects) with its exit status and output. */
export function runWatchdog(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<BinResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/watchdog'), ...args],
      { cwd, env, encoding: 'utf8', timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err && typeof err.code === 'number' ? err.code : err ? null : 0;
        resolve({ status: code, stdout, stderr });
      },
    );
  });
}
