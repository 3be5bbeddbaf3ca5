import type { ResolvedConfig } from '../config/resolved.ts';
import type { Logger } from '../log.ts';
import { requestShutdown, requestUpdate, type ServerCap } from './server-api.ts';
import type { ServerProcess } from './spawn.ts';

export interface GracefulOptions {
  apiPort: number;
  /** The secret of this launch (the server checks it as `WatchdogToken`). */
  secret: string;
  /** Shown to players ("Server shutting down: <reason>"). */
  reason: string;
  /** The rest from `shutdownWindows`. */
  requestMs: number;
  maxAnswerBytes: number;
  exitMs: number;
  log: Logger;
}

export const shutdownWindows = ({ timing, settings }: ResolvedConfig) => ({
  requestMs: timing.ShutdownRequestSeconds * 1000,
  exitMs: timing.ShutdownExitSeconds * 1000,
  maxAnswerBytes: settings.Answers.ServerMaxKilobytes * 1000,
});

const capOf = (opts: GracefulOptions): ServerCap => ({ timeoutMs: opts.requestMs, maxBytes: opts.maxAnswerBytes });

/** True when the process exits within `ms`; with 0 it only looks whether it has exited already. */
async function exitsWithin(proc: ServerProcess, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const result = await Promise.race([proc.exited.then(() => true as const), timeout]);
  clearTimeout(timer);
  return result;
}

async function killAndWait(proc: ServerProcess): Promise<'killed'> {
  proc.kill('SIGKILL');
  await proc.exited;
  return 'killed';
}

/**
 * The real watchdog's graceful shutdown: `POST /shutdown` (undeliverable → kill at once), `exitMs` for the exit, then
 * SIGKILL to the process group. Resolves once the process has exited. Never rejects.
 */
export async function shutdownGracefully(proc: ServerProcess, opts: GracefulOptions): Promise<'exited' | 'killed'> {
  if (await exitsWithin(proc, 0)) return 'exited';
  const delivered = await requestShutdown(opts.apiPort, opts.secret, opts.reason, capOf(opts));
  if (!delivered) {
    if (await exitsWithin(proc, 0)) return 'exited';
    opts.log.warn('shutdown request not delivered; killing the server', { pid: proc.pid, apiPort: opts.apiPort });
    return killAndWait(proc);
  }
  if (await exitsWithin(proc, opts.exitMs)) return 'exited';
  opts.log.warn('server did not exit after the shutdown request; killing it', { pid: proc.pid, waitedMs: opts.exitMs });
  return killAndWait(proc);
}

/**
 * STOP on request: `POST /update` so the game leaves at its round end; 'leaving' once delivered. Undeliverable (API
 * down, 4xx/5xx), `shutdownGracefully`, so a server with a broken API is still stopped (the real watchdog loses it).
 */
export async function leave(proc: ServerProcess, opts: GracefulOptions): Promise<'leaving' | 'exited' | 'killed'> {
  if (await exitsWithin(proc, 0)) return 'exited';
  if (await requestUpdate(opts.apiPort, opts.secret, capOf(opts))) return 'leaving';
  opts.log.warn('update request not delivered; shutting the server down instead', {
    pid: proc.pid,
    apiPort: opts.apiPort,
  });
  return shutdownGracefully(proc, opts);
}
