import { NOTICE_KINDS, type Notice, type NoticeKind } from '../bus.ts';
import type { NotificationSettings, NotifyFormat } from '../config/sections/notification.ts';

/** One chat destination as the notifier uses it. */
export interface Route {
  /** Where it was configured (`Notification.Routes[1]`): what logs say instead of the URL, which holds a token. */
  label: string;
  url: string;
  events: ReadonlySet<NoticeKind>;
  /** Null: every instance. */
  instances: ReadonlySet<string> | null;
  format: NotifyFormat;
}

/**
 * The routes `Notification` configures: `ChatWebhook` (or `DiscordWebhook`) for every kind and instance, then each
 * of `Routes` in order; a route without its own `Format` uses `Notification.Format`.
 */
export function routesFrom(settings: NotificationSettings): Route[] {
  const routes: Route[] = [];
  if (settings.ChatWebhook)
    routes.push({
      label: 'Notification.ChatWebhook',
      url: settings.ChatWebhook,
      events: new Set(NOTICE_KINDS),
      instances: null,
      format: settings.Format,
    });
  for (const [i, r] of settings.Routes.entries())
    routes.push({
      label: `Notification.Routes[${i}]`,
      url: r.Webhook,
      events: new Set(r.Events),
      instances: r.Instances ? new Set(r.Instances) : null,
      format: r.Format ?? settings.Format,
    });
  return routes;
}

/**
 * The routes a notice goes to: every one that lists its kind (and its instance, if it lists instances; a notice about
 * the daemon's host, key '', concerns them all), once per webhook URL, so a webhook named by two routes gets one
 * message, in the format of the first.
 */
export function routesFor(routes: readonly Route[], n: Notice): Route[] {
  const byUrl = new Map<string, Route>();
  for (const r of routes) {
    if (!r.events.has(n.kind) || (r.instances && n.key !== '' && !r.instances.has(n.key)) || byUrl.has(r.url)) continue;
    byUrl.set(r.url, r);
  }
  return [...byUrl.values()];
}
