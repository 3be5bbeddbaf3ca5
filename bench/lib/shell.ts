/** Shell pipelines the benchmarks time (the baselines' `curl && sha256sum && tar` and the untimed `sync`). */
import { spawn } from 'node:child_process';
import { wallNow } from './wait.ts';

/** Runs `bash -c script` with `env` added; resolves with its wall time in ms, rejects with its stderr tail. */
export function runBash(script: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = wallNow();
    const child = spawn('bash', ['-c', script], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(wallNow() - t0) : reject(new Error(`shell pipeline exited ${code}: ${err.slice(-500)}`)),
    );
  });
}
