import * as v from 'valibot';
import { httpUrl, text } from '../numbers.ts';

/** Where a route's notices go: each route names exactly one of these keys. */
export const DESTINATIONS = ['Webhook', 'Ntfy', 'Slack', 'Matrix', 'Telegram', 'Email', 'Json', 'Command'] as const;
export type DestinationName = (typeof DESTINATIONS)[number];

/** Secret values, never shown; a string in place of Matrix's, Telegram's or Email's map most likely is one. */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  ...DESTINATIONS.filter((d) => d !== 'Command'),
  ...['ChatWebhook', 'Token', 'AccessToken', 'BotToken', 'Smtp'],
]);

const url = (what: string) => httpUrl(`expected ${what} (http or https)`);

export const WebhookUrl = url('a webhook URL');
const TO = 'expected a recipient address or a list of them';
const address = v.pipe(v.string(TO), v.email(TO));

/** The destination keys of a route, with their shapes; `routeSchema` checks that exactly one is given. */
export const destinationEntries = {
  Webhook: v.optional(WebhookUrl),
  Ntfy: v.optional(url('an ntfy topic URL')),
  // An ntfy access token, sent as `Authorization: Bearer`; only beside Ntfy.
  Token: v.optional(text('an ntfy access token')),
  Slack: v.optional(url('a Slack, Mattermost or Rocket.Chat incoming-webhook URL')),
  Matrix: v.optional(
    v.strictObject(
      {
        Homeserver: url('the homeserver URL'),
        RoomId: v.pipe(text('a room id (!abc:example.org)'), v.regex(/^[!#]/, 'expected a room id (!abc:example.org)')),
        AccessToken: text("the bot account's access token"),
      },
      'expected a map with Homeserver, RoomId and AccessToken',
    ),
  ),
  Telegram: v.optional(
    v.strictObject(
      {
        BotToken: text("the bot's token (from @BotFather)"),
        ChatId: v.union([text('a chat id'), v.number('a chat id')], 'expected a chat id (a number or @channel)'),
        ApiUrl: v.optional(url('the Bot API URL'), 'https://api.telegram.org'),
      },
      'expected a map with BotToken, ChatId and optionally ApiUrl',
    ),
  ),
  Email: v.optional(
    v.strictObject(
      {
        Smtp: v.pipe(
          text('an SMTP URL (smtp://user:password@host:587 or smtps://…)'),
          v.regex(/^smtps?:\/\/[^/]/i, 'expected an SMTP URL (smtp://user:password@host:587 or smtps://…)'),
        ),
        From: v.pipe(text('a sender address'), v.email('expected a sender address')),
        To: v.union([address, v.pipe(v.array(address, TO), v.minLength(1, TO))], TO),
      },
      'expected a map with Smtp, From and To',
    ),
  ),
  Json: v.optional(url('a URL taking the notice as JSON')),
  Command: v.optional(
    v.pipe(
      v.array(text('a program or argument'), 'expected a list: the program, then its arguments'),
      v.minLength(1, 'expected a list: the program, then its arguments'),
    ),
  ),
};

export function destinationsIn(route: Partial<Record<DestinationName, unknown>>): DestinationName[] {
  return DESTINATIONS.filter((d) => route[d] !== undefined);
}

export const ONE_DESTINATION = `expected exactly one destination: ${DESTINATIONS.join(', ')}`;
