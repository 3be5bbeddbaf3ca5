import type { Bus } from '../bus.ts';
import type { ResolvedConfig } from '../config/resolved.ts';
import type { Logger } from '../log.ts';
import { createNotifier, type Notifier, type NotifierOptions } from '../notify/notifier.ts';
import { routesFrom } from '../notify/routes.ts';

/** A change of any of it makes a new notifier. */
const webhookSettings = (c: ResolvedConfig) => {
  const t = c.timing;
  const names = c.instances.map((i) => [i.key, i.name]);
  const timing = [t.WebhookRetries, t.WebhookRetryBaseSeconds, t.WebhookTimeoutSeconds];
  const answers = c.settings.Answers.NotificationMaxKilobytes;
  return JSON.stringify([c.settings.Notification, names, timing, answers]);
};

/** The chat notifier across configuration reloads: made anew only when what it sends, or where, changed. */
export function hostNotifier(config: ResolvedConfig, bus: Bus, log: Logger) {
  // Kept across reloads, so a notifier made anew still knows each server's launch (for uptimes and revisions).
  const launches: NonNullable<NotifierOptions['launches']> = new Map();
  const start = (c: ResolvedConfig): Notifier | null => {
    const t = c.timing;
    const routes = routesFrom(c.settings.Notification);
    const names = new Map(c.instances.map((i) => [i.key, i.name]));
    return routes.length > 0
      ? createNotifier({
          routes,
          bus,
          nameOf: (key) => names.get(key),
          launches,
          log,
          retries: t.WebhookRetries,
          retryBaseMs: t.WebhookRetryBaseSeconds * 1000,
          timeoutMs: t.WebhookTimeoutSeconds * 1000,
          maxAnswerBytes: c.settings.Answers.NotificationMaxKilobytes * 1000,
        })
      : null;
  };
  let current = config;
  let notifier = start(config);
  return {
    reconfigure(next: ResolvedConfig): void {
      const previous = current;
      current = next;
      if (webhookSettings(previous) === webhookSettings(next)) return;
      // The old notifier finishes what it queued (bounded by its stop wait) while the new one takes new alerts.
      const old = notifier;
      notifier = start(next);
      void old?.stop();
    },
    stop: async (): Promise<void> => {
      await notifier?.stop();
    },
  };
}
