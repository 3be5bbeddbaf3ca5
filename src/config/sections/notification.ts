import * as v from 'valibot';
import { NOTICE_KINDS } from '../../bus.ts';
import { isMap, type ReportProblem, rawInstances } from '../merge.ts';
import { destinationEntries, destinationsIn, ONE_DESTINATION, WebhookUrl } from './destinations.ts';

export const NOTIFY_FORMATS = ['Text', 'Embed'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

const Format = v.picklist(NOTIFY_FORMATS, 'expected Text or Embed');
const KINDS = `expected one of ${NOTICE_KINDS.join(', ')}`;

/** One route: the kinds it wants, for all instances or the ones listed, and exactly one destination. */
export const RouteSchema = v.pipe(
  v.strictObject(
    {
      ...destinationEntries,
      Events: v.pipe(
        v.array(v.picklist(NOTICE_KINDS, KINDS), `expected a list of event kinds (${NOTICE_KINDS.join(', ')})`),
        v.minLength(1, `expected at least one event kind (${NOTICE_KINDS.join(', ')})`),
      ),
      // Checked against Servers.Instances by checkRouteInstances below.
      Instances: v.optional(v.array(v.string('expected an instance id'), 'expected a list of instance ids')),
      // How a Webhook is sent (Discord's text or embed); the other destinations have their own shape.
      Format: v.optional(Format),
    },
    'expected a map with one destination (Webhook, Ntfy, Slack, Matrix, Telegram, Email, Json or Command), Events and optionally Instances and Format',
  ),
  v.check((r) => destinationsIn(r).length === 1, ONE_DESTINATION),
  v.check((r) => r.Token === undefined || r.Ntfy !== undefined, 'expected Token only beside Ntfy'),
  v.check((r) => r.Format === undefined || r.Webhook !== undefined, 'expected Format only beside Webhook'),
);

export const NotificationSchema = v.strictObject(
  {
    // Also read as DiscordWebhook, the real watchdog's name (binding.ts): the route for every kind.
    ChatWebhook: v.optional(WebhookUrl),
    Format: v.optional(Format, 'Text'),
    Routes: v.optional(
      v.array(RouteSchema, 'expected a list of routes (each a map with a destination and Events)'),
      [],
    ),
  },
  'expected a map with ChatWebhook (or DiscordWebhook), Format and Routes',
);

export type NotificationSettings = v.InferOutput<typeof NotificationSchema>;

/** `Notification.Routes[].Instances` must name configured instances: a misspelt one would quietly get nothing. */
export function checkRouteInstances(raw: Record<string, unknown>, problem: ReportProblem): void {
  const known = Object.keys(rawInstances(raw));
  const notification = raw.Notification;
  const routes = isMap(notification) ? notification.Routes : undefined;
  if (!Array.isArray(routes)) return;
  routes.forEach((route: unknown, i) => {
    const instances = isMap(route) ? route.Instances : undefined;
    if (!Array.isArray(instances)) return;
    instances.forEach((id: unknown, j) => {
      if (typeof id === 'string' && !known.includes(id))
        problem(
          ['Notification', 'Routes', i, 'Instances', j],
          `expected an instance id from Servers.Instances (${known.join(', ') || 'none configured'})`,
          id,
        );
    });
  });
}
