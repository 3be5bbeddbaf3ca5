import type { BusEvents, Notice } from '../bus.ts';
import { formatDelay } from './messages.ts';

type Blocked = BusEvents['instance:launch-blocked'];
type Unblocked = BusEvents['instance:launch-unblocked'];

const REASON = { resources: "the watchdog's own resources", port: 'the game port is still held' } as const;

/**
 * The first blocked launch of an episode as a notice (`cannot launch `alpha`: the watchdog is out of file
 * descriptors (EMFILE); retrying in 8 s`); null for the retries after it, so an episode is one message however
 * long it lasts. Its end is `noticeFromUnblocked`.
 */
export function noticeFromBlocked(e: Blocked): Notice | null {
  if (e.attempts !== 1) return null;
  return {
    key: e.key,
    kind: 'launch-blocked',
    message: `cannot launch \`${e.key}\`: ${e.message}; retrying in ${formatDelay(e.retryMs)} (with back-off, until it works).`,
    reason: REASON[e.kind],
    at: e.at,
  };
}

/** The launch that worked after blocked ones: the episode the first notice began is over. */
export function noticeFromUnblocked(e: Unblocked): Notice {
  const tries = `${e.attempts} blocked attempt${e.attempts === 1 ? '' : 's'}`;
  return {
    key: e.key,
    kind: 'launch-blocked',
    title: 'Launched again',
    message: `\`${e.key}\` launched again after ${tries}.`,
    reason: `${REASON[e.kind]} no longer blocks it`,
    at: e.at,
  };
}
