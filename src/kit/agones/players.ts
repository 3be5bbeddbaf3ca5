import type { Logger } from '../../log.ts';
import type { AgonesSdk } from './sdk.ts';

/** The label (`agones.dev/sdk-players`) and the Counter of the player count. */
export const PLAYERS_KEY = 'players';

/**
 * Reports the player count, one report at a time (a change meanwhile right after): the label always, the Counter
 * unless the first update is refused (no `players` Counter, or no CountsAndLists), noted once.
 */
export function startPlayerReports(opts: { sdk: AgonesSdk; players: () => number; log: Logger; signal: AbortSignal }) {
  const { sdk, log, signal } = opts;
  let reported: number | undefined;
  let counter: 'untried' | 'on' | 'off' = 'untried';
  let running: Promise<void> | undefined;
  let again = false;

  const report = async (count: number) => {
    const call = { signal, retry: { maxElapsedMs: 5_000 } };
    try {
      await sdk.setLabel(PLAYERS_KEY, String(count), call);
      reported = count;
    } catch (err) {
      if (!signal.aborted) log.warn('could not set the players label', { error: (err as Error).message });
    }
    if (counter === 'off' || signal.aborted) return;
    try {
      await sdk.setCounter(PLAYERS_KEY, count, call);
      counter = 'on';
    } catch (err) {
      if (signal.aborted) return;
      if (counter === 'untried') {
        counter = 'off';
        log.info('the players Counter is not available; reporting the player count as a label only', {
          error: (err as Error).message,
        });
      } else {
        log.warn('could not set the players Counter', { error: (err as Error).message });
      }
    }
  };

  /** Reports the count if it changed (or always, with `force`). */
  const tick = (force = false): void => {
    if (signal.aborted) return;
    if (running) {
      again = true;
      return;
    }
    const count = opts.players();
    if (!force && count === reported) return;
    running = report(count).finally(() => {
      running = undefined;
      if (again) {
        again = false;
        tick();
      }
    });
  };

  return {
    tick,
    async idle(): Promise<void> {
      while (running) await running;
    },
  };
}
