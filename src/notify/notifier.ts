import { type Bus, type Notice, subscribe } from '../bus.ts';
import { monotonicMs } from '../clock.ts';
import { describeError } from '../errors.ts';
import { commandDelivery } from './destinations/command.ts';
import { emailDelivery } from './destinations/email.ts';
import * as http from './destinations/http.ts';
import {
  type LaunchSeen,
  noticeFromAlert,
  noticeFromBlocked,
  noticeFromDisk,
  noticeFromDone,
  noticeFromPending,
  noticeFromUnblocked,
  noticeFromUpdate,
} from './notices.ts';
import { payloadOf } from './payload.ts';
import { type Route, routesFor, type Target, type TargetOf, targetIdentity } from './routes.ts';
import { createSender, type Delivery, type DeliveryContext, type QueueOptions, type Sender } from './sender.ts';

/** How each destination delivers a notice: made once per notice, so a retry sends the same. */
const DELIVERIES: { [K in Target['type']]: (t: TargetOf<K>, n: Notice, ctx: DeliveryContext) => Delivery } = {
  // A Discord-shaped webhook: `{content}` or `{embeds}` by the route's format, mentions off.
  Webhook: (t, n, ctx) => http.postJson(t.url, payloadOf(n, ctx.format, ctx.name), ctx),
  Json: (t, n, ctx) => http.postJson(t.url, http.noticeJson(n, ctx.name), ctx),
  Slack: (t, n, ctx) => http.postJson(t.url, http.slackPayload(n, ctx.name), ctx),
  Ntfy: http.ntfyDelivery,
  Matrix: http.matrixDelivery,
  Telegram: http.telegramDelivery,
  Email: emailDelivery,
  Command: commandDelivery,
};

export interface NotifierOptions
  extends Omit<QueueOptions, 'label' | 'destination'>,
    Pick<DeliveryContext, 'timeoutMs' | 'maxAnswerBytes' | 'ca'> {
  routes: readonly Route[];
  bus: Bus;
  /** An instance's display name (`Name`), for the embed's Instance field and title. */
  nameOf?: (key: string) => string | undefined;
  /** Launches seen, by key; pass the previous notifier's on a reload so uptimes survive it. */
  launches?: Map<string, LaunchSeen>;
  /** The clock uptimes are measured on: the monotonic one (a test gives its own). */
  now?: () => number;
}

/**
 * Tells the chat what happened (the bus events below), each to every route that wants its kind and instance, in its
 * destination's format. One queue per destination, so a 429 on one holds up no other. Fire and forget: the handlers
 * only queue, so an emitter never waits or sees an error.
 */
export function createNotifier(opts: NotifierOptions) {
  const { routes, bus, nameOf, launches = new Map<string, LaunchSeen>(), now = monotonicMs } = opts;
  const { timeoutMs, maxAnswerBytes, ca } = opts;
  const senders = new Map<string, Sender>();
  for (const r of routes) {
    const id = targetIdentity(r.target);
    if (!senders.has(id)) senders.set(id, createSender({ ...opts, label: r.label, destination: r.target.type }));
  }

  /** Builds the notice and queues it for its routes; never throws into the emitter (mitt calls handlers inline). */
  const tell = (make: () => Notice | null): void => {
    try {
      const n = make();
      if (!n) return;
      for (const r of routesFor(routes, n)) {
        const ctx: DeliveryContext = { format: r.format, timeoutMs, maxAnswerBytes, ca, name: nameOf?.(n.key) };
        const deliver = DELIVERIES[r.target.type] as (t: Target, n: Notice, ctx: DeliveryContext) => Delivery;
        senders.get(targetIdentity(r.target))?.send(deliver(r.target, n, ctx));
      }
    } catch (err) {
      opts.log.error('could not build a chat notification', { error: describeError(err) });
    }
  };
  const unsubscribe = subscribe(bus, {
    'instance:launch': (e) => launches.set(e.key, { ms: now(), revision: e.revision }),
    'instance:alert': (e) => tell(() => noticeFromAlert(e, launches.get(e.key), now())),
    'instance:update': (e) => tell(() => noticeFromUpdate(e)),
    'instance:notice': (e) => tell(() => e),
    'instance:maintenance-pending': (e) => tell(() => noticeFromPending(e)),
    'instance:maintenance-done': (e) => tell(() => noticeFromDone(e)),
    'daemon:disk-low': (e) => tell(() => noticeFromDisk(e, false)),
    'daemon:disk-recovered': (e) => tell(() => noticeFromDisk(e, true)),
    'instance:launch-blocked': (e) => tell(() => noticeFromBlocked(e)),
    'instance:launch-unblocked': (e) => tell(() => noticeFromUnblocked(e)),
  });

  return {
    async stop() {
      unsubscribe();
      await Promise.allSettled([...senders.values()].map((s) => s.stop()));
    },
  };
}
export type Notifier = ReturnType<typeof createNotifier>;
