import { NOTICE_KINDS, type Notice, type NoticeKind } from '../bus.ts';
import type { NotificationSettings, NotifyFormat } from '../config/sections/notification.ts';

type RouteSettings = NotificationSettings['Routes'][number];

/** One destination as the notifier uses it. */
export interface Route {
  /** Where it was configured (`Notification.Routes[1]`): what logs say instead of the URL, which holds a token. */
  label: string;
  target: Target;
  events: ReadonlySet<NoticeKind>;
  /** Null: every instance. */
  instances: ReadonlySet<string> | null;
  /** A Webhook's shape (Discord text or embed); the other destinations have their own. */
  format: NotifyFormat;
}

/**
 * A route's destination as configured (the schema guarantees exactly one). Every one but Command's holds a secret
 * (a token in a URL, a token, an SMTP password): never logged.
 */
export function targetOf(r: RouteSettings) {
  if (r.Webhook) return { type: 'Webhook' as const, url: r.Webhook };
  if (r.Ntfy) return { type: 'Ntfy' as const, url: r.Ntfy, token: r.Token ?? null };
  if (r.Slack) return { type: 'Slack' as const, url: r.Slack };
  if (r.Json) return { type: 'Json' as const, url: r.Json };
  if (r.Matrix) return { type: 'Matrix' as const, ...r.Matrix };
  if (r.Telegram) return { type: 'Telegram' as const, ...r.Telegram, ChatId: String(r.Telegram.ChatId) };
  if (r.Email) return { type: 'Email' as const, ...r.Email, To: [r.Email.To].flat() };
  if (r.Command) return { type: 'Command' as const, argv: r.Command };
  throw new Error('a route without a destination passed the schema');
}

export type Target = ReturnType<typeof targetOf>;
/** The target of one destination type. */
export type TargetOf<K extends Target['type']> = Extract<Target, { type: K }>;

/** What makes two routes one destination (a webhook named twice gets one message); holds secrets, so never logged. */
export function targetIdentity(t: Target): string {
  return t.type === 'Webhook' ? t.url : JSON.stringify(t);
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
      target: { type: 'Webhook', url: settings.ChatWebhook },
      events: new Set(NOTICE_KINDS),
      instances: null,
      format: settings.Format,
    });
  for (const [i, r] of settings.Routes.entries())
    routes.push({
      label: `Notification.Routes[${i}]`,
      target: targetOf(r),
      events: new Set(r.Events),
      instances: r.Instances ? new Set(r.Instances) : null,
      format: r.Format ?? settings.Format,
    });
  return routes;
}

/**
 * The routes a notice goes to: every one that lists its kind (and its instance, if it lists instances; a notice about
 * the daemon's host, key '', concerns them all), once per destination, so a webhook named by two routes gets one
 * message, in the format of the first.
 */
export function routesFor(routes: readonly Route[], n: Notice): Route[] {
  const byTarget = new Map<string, Route>();
  for (const r of routes) {
    const id = targetIdentity(r.target);
    if (!r.events.has(n.kind) || (r.instances && n.key !== '' && !r.instances.has(n.key)) || byTarget.has(id)) continue;
    byTarget.set(id, r);
  }
  return [...byTarget.values()];
}
