import { onInterrupt } from './interrupt.ts';

/**
 * Repeats `draw` every `intervalMs` until SIGINT/SIGTERM or `count` draws, whichever comes first.
 * Returns the last draw's exit code, or 0 when a signal ended it (the person asked to stop).
 */
export async function repeatUntilInterrupted(
  draw: (n: number) => Promise<number>,
  opts: { intervalMs: number; count?: number },
): Promise<number> {
  const stop = onInterrupt();
  let code = 0;
  try {
    for (let n = 1; !stop.interrupted && (opts.count === undefined || n <= opts.count); n++) {
      code = await draw(n);
      if (stop.interrupted || n === opts.count) break;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([stop.signalled, new Promise<void>((r) => (timer = setTimeout(r, opts.intervalMs)))]);
      clearTimeout(timer);
    }
  } finally {
    stop.dispose();
  }
  return stop.interrupted ? 0 : code;
}
