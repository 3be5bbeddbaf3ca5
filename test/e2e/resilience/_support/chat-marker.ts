/**
 * "No further chat message came" as a fact rather than a quiet pause. The daemon sends chat messages to a webhook
 * one at a time, first in first out (src/notify/sender.ts), so once a marker message asked for now has arrived,
 * every message the daemon had emitted before it has arrived too.
 */
import type { RunningDaemon } from '../../../_support/daemon.ts';
import { waitFor } from '../../../_support/env.ts';
import type { WebhookReceiver } from '../../../_support/webhook.ts';

/**
 * Puts `key` on hold and takes the hold back, and waits for the hold's chat message: the marker. A hold changes
 * nothing that runs (it only delays scheduled restarts and update installs, and it is released at once).
 */
export async function chatFlushed(d: RunningDaemon, hook: WebhookReceiver, key: string, token: string): Promise<void> {
  const seen = hook.messages.length;
  const status = await d.control(key, token, 'hold');
  if (status !== 200) throw new Error(`hold for the chat marker answered ${status}`);
  try {
    await waitFor(
      'the chat marker (the hold message)',
      () => hook.messages.slice(seen).some((m) => m.content.includes(`\`${key}\` is on hold`)),
      15_000,
    );
  } finally {
    await d.control(key, token, 'release');
  }
}
