import type { Notice } from '../../bus.ts';
import type { Delivery, DeliveryContext } from '../sender.ts';
import { type CommandTarget, commandDelivery } from './command.ts';
import { type EmailTarget, emailDelivery } from './email.ts';
import * as http from './http.ts';

/** Where a route's notices go, as configured (`Notification.Routes[].<Destination>`). */
export type Target =
  | http.WebhookTarget
  | http.NtfyTarget
  | http.SlackTarget
  | http.MatrixTarget
  | http.TelegramTarget
  | EmailTarget
  | http.JsonTarget
  | CommandTarget;

type Build<T extends Target> = (t: T, n: Notice, ctx: DeliveryContext) => Delivery;
const BUILDERS: { [K in Target['type']]: Build<Extract<Target, { type: K }>> } = {
  Webhook: http.webhookDelivery,
  Ntfy: http.ntfyDelivery,
  Slack: http.slackDelivery,
  Matrix: http.matrixDelivery,
  Telegram: http.telegramDelivery,
  Email: emailDelivery,
  Json: http.jsonDelivery,
  Command: commandDelivery,
};

/** The notice as one message for `target`, made now (so a retry sends the same), delivered by the route's queue. */
export function deliveryFor(target: Target, n: Notice, ctx: DeliveryContext): Delivery {
  return (BUILDERS[target.type] as Build<Target>)(target, n, ctx);
}
