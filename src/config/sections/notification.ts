import * as v from 'valibot';
import { NOTICE_KINDS } from '../../bus.ts';
import { isMap, type ReportProblem, rawInstances } from '../merge.ts';

export const NOTIFY_FORMATS = ['Text', 'Embed'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

const URL_EXPECTED = 'expected a webhook URL (http or https)';
/** A webhook URL carries its token: problem lines never show it (issues.ts). */
const WebhookUrl = v.pipe(v.string(URL_EXPECTED), v.url(URL_EXPECTED), v.regex(/^https?:\/\//i, URL_EXPECTED));
const Format = v.picklist(NOTIFY_FORMATS, 'expected Text or Embed');
const KINDS = `expected one of ${NOTICE_KINDS.join(', ')}`;

/** One chat destination: the kinds it wants, for all instances or the ones listed. */
export const RouteSchema = v.strictObject(
  {
    Webhook: WebhookUrl,
    Events: v.pipe(
      v.array(v.picklist(NOTICE_KINDS, KINDS), `expected a list of event kinds (${NOTICE_KINDS.join(', ')})`),
      v.minLength(1, `expected at least one event kind (${NOTICE_KINDS.join(', ')})`),
    ),
    // Checked against Servers.Instances by checkRouteInstances below.
    Instances: v.optional(v.array(v.string('expected an instance id'), 'expected a list of instance ids')),
    Format: v.optional(Format),
  },
  'expected a map with Webhook, Events and optionally Instances and Format',
);

export const NotificationSchema = v.strictObject(
  {
    // Also read as DiscordWebhook, the real watchdog's name (binding.ts): the route for every kind.
    ChatWebhook: v.optional(WebhookUrl),
    Format: v.optional(Format, 'Text'),
    Routes: v.optional(v.array(RouteSchema, 'expected a list of routes (each a map with Webhook and Events)'), []),
  },
  'expected a map with ChatWebhook (or DiscordWebhook), Format and Routes',
);

export type NotificationSettings = v.InferOutput<typeof NotificationSchema>;

/**
 * `Notification.Routes[].Instances` must name configured instances: a misspelt id would quietly send that route
 * nothing. Reads the raw settings defensively, as checks.ts does (a wrong type is the schema's problem).
 */
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
