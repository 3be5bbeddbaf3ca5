import { type Bus, type Notice, subscribe } from '../bus.ts';
import { describeError } from '../errors.ts';
import { noticeFromDisk } from './disk-notices.ts';
import { noticeFromBlocked, noticeFromUnblocked } from './launch-notices.ts';
import { noticeFromDone, noticeFromPending } from './maintenance-notices.ts';
import { type LaunchSeen, noticeFromAlert, noticeFromUpdate } from './notices.ts';
import { payloadOf } from './payload.ts';
import { type Route, routesFor } from './routes.ts';
import { createWebhookSender, type SenderOptions, type WebhookSender } from './webhook.ts';

export interface NotifierOptions extends Omit<SenderOptions, 'url' | 'label'> {
  routes: readonly Route[];
  bus: Bus;
  /** An instance's display name (`Name`), for the embed's Instance field and title. */
  nameOf?: (key: string) => string | undefined;
  /** Launches seen, by key; pass the previous notifier's on a reload so uptimes survive it. */
  launches?: Map<string, LaunchSeen>;
}

export interface Notifier {
  stop(): Promise<void>;
}

/**
 * Tells the chat what happened: alerts (crash, hang, loop, failing, stopped), installed and failed updates,
 * maintenance as it begins and ends (`maintenance:pending`, `maintenance:done`), disk space going low and coming
 * back (`disk:low`, `disk:recovered`) and any `instance:notice`, each to
 * every route that wants its kind and instance, in the route's format. One sender per webhook URL, so a 429 on one
 * webhook holds up no other. Fire and forget: the handlers only queue, so an emitter never waits or sees an error.
 *
 * @example
 * const notifier = createNotifier({ routes: routesFrom(settings.Notification), bus, log, retries: 3, retryBaseMs: 1000, timeoutMs: 10_000 });
 * await notifier.stop();
 */
export function createNotifier(opts: NotifierOptions): Notifier {
  const { routes, bus, nameOf, launches = new Map<string, LaunchSeen>(), ...senderOpts } = opts;
  const senders = new Map<string, WebhookSender>();
  for (const r of routes)
    if (!senders.has(r.url)) senders.set(r.url, createWebhookSender({ ...senderOpts, url: r.url, label: r.label }));

  /** Builds the notice and queues it for its routes; never throws into the emitter (mitt calls handlers inline). */
  const tell = (make: () => Notice | null): void => {
    try {
      const n = make();
      if (n) for (const r of routesFor(routes, n)) senders.get(r.url)?.send(payloadOf(n, r.format, nameOf?.(n.key)));
    } catch (err) {
      opts.log.error('could not build a chat notification', { error: describeError(err) });
    }
  };
  const unsubscribe = subscribe(bus, {
    'instance:launch': (e) => launches.set(e.key, { at: e.at, revision: e.revision }),
    'instance:alert': (e) => tell(() => noticeFromAlert(e, launches.get(e.key))),
    'instance:update': (e) => tell(() => noticeFromUpdate(e)),
    'instance:notice': (e) => tell(() => e),
    'maintenance:pending': (e) => tell(() => noticeFromPending(e)),
    'maintenance:done': (e) => tell(() => noticeFromDone(e)),
    'disk:low': (e) => tell(() => noticeFromDisk(e, false)),
    'disk:recovered': (e) => tell(() => noticeFromDisk(e, true)),
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
