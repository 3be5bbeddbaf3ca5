import type { Logger } from '../../log.ts';
import { NO_RETRY } from './retry.ts';
import type { AgonesSdk } from './sdk.ts';
import type { GameServer } from './wire.ts';

/** `/health` now and every `intervalMs`, one at a time (a slow answer skips the ticks it overlaps). */
export function startHealthPings(opts: {
  sdk: AgonesSdk;
  intervalMs: number;
  signal: AbortSignal;
  log: Logger;
  wanted?: () => boolean;
  /** After each ping, answered or not. */
  after?: () => void;
}) {
  const { sdk, intervalMs, signal, log } = opts;
  let healthy: boolean | undefined;
  let pinging: Promise<void> | undefined;
  const ping = async () => {
    if (opts.wanted && !opts.wanted()) return;
    try {
      await sdk.health({ signal, retry: { ...NO_RETRY, timeoutMs: Math.max(intervalMs, 1_000) } });
      if (healthy === false) log.info('Agones health pings answered again');
      healthy = true;
    } catch (err) {
      if (signal.aborted) return;
      // Before the SDK server is up every ping fails: said once, not every interval.
      if (healthy !== false) log.warn('Agones health ping failed', { error: (err as Error).message });
      healthy = false;
    }
    if (!signal.aborted) opts.after?.();
  };
  const tick = () => {
    pinging ??= ping().finally(() => {
      pinging = undefined;
    });
  };
  const timer = setInterval(tick, intervalMs);
  tick();
  return {
    /** A ping in flight is let finish (or cancelled by `signal`). */
    stop: (): void => clearInterval(timer),
    idle: async (): Promise<void> => {
      await pinging;
    },
  };
}

/** `/ready`, retried until the SDK server answers, then `then`; a failure is logged. Callers ask once only. */
export async function callReady(
  sdk: AgonesSdk,
  signal: AbortSignal,
  log: Logger,
  then: () => void | Promise<void>,
): Promise<void> {
  try {
    await sdk.ready({ signal, retry: { maxElapsedMs: Number.POSITIVE_INFINITY } });
    log.info('told Agones the server is Ready');
    await then();
  } catch (err) {
    if (!signal.aborted) log.error('could not tell Agones the server is Ready', { error: (err as Error).message });
  }
}

/** `/shutdown` unless `Shutdown` already, given up after `maxElapsedMs` (the SDK server may be gone); never throws. */
export async function callShutdown(
  sdk: AgonesSdk,
  signal: AbortSignal,
  log: Logger,
  opts: { why: string; state: string | null | undefined; maxElapsedMs: number },
): Promise<void> {
  if (opts.state === 'Shutdown') return log.info(`the GameServer is already Shutdown; not asking again (${opts.why})`);
  try {
    await sdk.shutdown({ signal, retry: { maxElapsedMs: opts.maxElapsedMs } });
    log.info(`asked Agones to shut the GameServer down (${opts.why})`);
  } catch (err) {
    if (!signal.aborted)
      log.error('could not ask Agones to shut the GameServer down', { error: (err as Error).message });
  }
}

/** Follows the GameServer until `signal` aborts, logging each change of its state. */
export function followGameServer(
  sdk: AgonesSdk,
  signal: AbortSignal,
  log: Logger,
  onChange: (gs: GameServer) => void,
): Promise<void> {
  let last: string | undefined;
  return sdk.watchGameServer(
    (gs) => {
      const next = gs.status?.state;
      if (next !== last) log.info(`the GameServer is ${next ?? 'in no state'}`, { name: gs.object_meta?.name });
      last = next;
      onChange(gs);
    },
    signal,
    { onError: (err) => log.debug('GameServer watch interrupted; reopening', { error: err.message }) },
  );
}
