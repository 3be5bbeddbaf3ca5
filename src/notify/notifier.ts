import type { Bus, BusEvents, Notice } from '../bus.ts';
import { describeError } from '../errors.ts';
import { noticeFromAlert, noticeFromUpdate, type LaunchSeen } from './notices.ts';
import { payloadOf } from './payload.ts';
import { routesFor, type Route } from './routes.ts';
import { createWebhookSender, type SenderOptions, type WebhookSender } from './webhook.ts';

export interface NotifierOptions extends Omit<SenderOptions, 'url' | 'label'> {
  routes: readonly Route[];
  bus: Bus;
  /** An instance's display name (`Name`), for the embed's Instance field and title. */
  nameOf?: (key: string) => string | undefined;
}

export interface Notifier {
  stop(): Promise<void>;
}

/**
 * Tells the chat what happened: alerts (crash, hang, loop, failing, stopped), installed and failed updates, and
 * every `instance:notice` (maintenance emits those), each to every route that wants its kind and instance, in the
 * route's format. One sender per webhook URL, so a 429 on one webhook holds up no other. Fire and forget: the bus
 * handlers only queue, so an emitter never waits or sees an error.
 *
 * @example
 * const notifier = createNotifier({ routes: routesFrom(settings.Notification), bus, log, retries: 3, retryBaseMs: 1000, timeoutMs: 10_000 });
 * await notifier.stop();
 */
export function createNotifier(opts: NotifierOptions): Notifier {
  const { routes, bus, nameOf, ...senderOpts } = opts;
  const senders = new Map<string, WebhookSender>();
  for (const r of routes)
    if (!senders.has(r.url)) senders.set(r.url, createWebhookSender({ ...senderOpts, url: r.url, label: r.label }));
  const launches = new Map<string, LaunchSeen>();

  const notify = (n: Notice): void => {
    try {
      for (const r of routesFor(routes, n)) senders.get(r.url)?.send(payloadOf(n, r.format, nameOf?.(n.key)));
    } catch (err) {
      // Never throw into the emitter (mitt calls handlers synchronously).
      opts.log.error('could not build a chat notification', { kind: n.kind, error: describeError(err) });
    }
  };
  const onLaunch = (e: BusEvents['instance:launch']) => launches.set(e.key, { at: e.at, revision: e.revision });
  const onAlert = (e: BusEvents['instance:alert']) => notify(noticeFromAlert(e, launches.get(e.key)));
  const onUpdate = (e: BusEvents['instance:update']) => {
    const n = noticeFromUpdate(e);
    if (n) notify(n);
  };

  bus.on('instance:launch', onLaunch);
  bus.on('instance:alert', onAlert);
  bus.on('instance:update', onUpdate);
  bus.on('instance:notice', notify);

  return {
    async stop() {
      bus.off('instance:launch', onLaunch);
      bus.off('instance:alert', onAlert);
      bus.off('instance:update', onUpdate);
      bus.off('instance:notice', notify);
      await Promise.allSettled([...senders.values()].map((s) => s.stop()));
    },
  };
}
