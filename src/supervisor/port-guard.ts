import { monotonicMs } from '../clock.ts';
import { LaunchBlockedError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { type PortHolder, portBindsFree, portHolders } from '../process/port-holders.ts';
import type { ProcessTracking } from '../process/tracking.ts';

async function holdersOf(port: number): Promise<PortHolder[]> {
  if (await portBindsFree(port)) return [];
  const seen = new Map<number, PortHolder>();
  for (const h of await portHolders(port)) if (!seen.has(h.pid)) seen.set(h.pid, h);
  return [...seen.values()];
}

const who = (port: number, h: PortHolder) => `port ${port} held by pid ${h.pid} (${h.name})`;

/**
 * Before a launch: makes sure the game port is free. A holder that is ours is killed with the rest of its launch;
 * one that is not is left alone. Throws `LaunchBlockedError('port', …)` when the port is held by a process that is
 * not ours, or still held once ours were killed and `waitMs` has passed.
 */
export async function clearForLaunch(opts: {
  key: string;
  /** The instance's ApiPort, on TCP and UDP (the engine's game port by default). */
  port: number;
  tracking: ProcessTracking | undefined;
  log: Logger;
  /** Timing.StragglerKillSeconds. */
  waitMs: number;
  report?: (pids: number[]) => void;
}): Promise<void> {
  const { port, key, tracking, log } = opts;
  const holders = port > 0 ? await holdersOf(port) : [];
  const foreign: PortHolder[] = [];
  for (const h of holders) {
    if (tracking && (await tracking.owns(h.pid, key))) {
      log.warn(`${who(port, h)}, left from the previous launch; killing it`, { pid: h.pid, proto: h.proto });
    } else foreign.push(h);
  }
  // Ours on the port go with the rest of their launch; any other leftover was swept as the instance started.
  const swept = foreign.length < holders.length ? ((await tracking?.sweep(key).catch(() => [])) ?? []) : [];
  if (swept.length > 0) {
    log.warn(`killed ${swept.length} process(es) left by earlier launches`, { pids: swept.join(' ') });
    opts.report?.(swept);
  }
  const blocked = (message: string) => new LaunchBlockedError('port', message);
  const first = foreign[0];
  if (first?.pid === process.pid)
    throw blocked(`port ${port} is this watchdog's own: ApiPort must differ from the ports in Urls`);
  if (first) {
    throw blocked(`${who(port, first)}, which this watchdog did not start; the server cannot start until it is freed`);
  }
  if (holders.length === 0) return;
  const deadline = monotonicMs() + opts.waitMs;
  for (;;) {
    const left = await holdersOf(port);
    const still = left[0];
    if (!still) return;
    if (monotonicMs() >= deadline) {
      throw blocked(
        `${who(port, still)}, still held ${opts.waitMs / 1000} s after the previous launch's processes were killed`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
