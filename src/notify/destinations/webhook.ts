import type { Notice } from '../../bus.ts';
import { payloadOf } from '../payload.ts';
import type { Delivery } from '../sender.ts';
import type { DeliveryContext } from './context.ts';
import { postJson } from './http.ts';

export interface WebhookTarget {
  type: 'Webhook';
  /** Holds the webhook's token: never logged. */
  url: string;
}

/** A Discord-shaped webhook: `{content}` or `{embeds}` by the route's format, mentions off. */
export function webhookDelivery(t: WebhookTarget, n: Notice, ctx: DeliveryContext): Delivery {
  return postJson(t.url, payloadOf(n, ctx.format, ctx.name), ctx);
}
