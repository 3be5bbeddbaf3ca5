import type { Notice } from '../../bus.ts';
import type { Delivery } from '../sender.ts';
import { type CommandTarget, commandDelivery } from './command.ts';
import type { DeliveryContext } from './context.ts';
import { type EmailTarget, emailDelivery } from './email.ts';
import { type JsonTarget, jsonDelivery } from './json.ts';
import { type MatrixTarget, matrixDelivery } from './matrix.ts';
import { type NtfyTarget, ntfyDelivery } from './ntfy.ts';
import { type SlackTarget, slackDelivery } from './slack.ts';
import { type TelegramTarget, telegramDelivery } from './telegram.ts';
import { type WebhookTarget, webhookDelivery } from './webhook.ts';

/** Where a route's notices go, as configured (`Notification.Routes[].<Destination>`). */
export type Target =
  | WebhookTarget
  | NtfyTarget
  | SlackTarget
  | MatrixTarget
  | TelegramTarget
  | EmailTarget
  | JsonTarget
  | CommandTarget;

export type { DeliveryContext };

type Build<T extends Target> = (t: T, n: Notice, ctx: DeliveryContext) => Delivery;
const BUILDERS: { [K in Target['type']]: Build<Extract<Target, { type: K }>> } = {
  Webhook: webhookDelivery,
  Ntfy: ntfyDelivery,
  Slack: slackDelivery,
  Matrix: matrixDelivery,
  Telegram: telegramDelivery,
  Email: emailDelivery,
  Json: jsonDelivery,
  Command: commandDelivery,
};

/** The notice as one message for `target`, made now (so a retry sends the same), delivered by the route's queue. */
export function deliveryFor(target: Target, n: Notice, ctx: DeliveryContext): Delivery {
  return (BUILDERS[target.type] as Build<Target>)(target, n, ctx);
}
