import { type Bus, type Notice, subscribe } from '../bus.ts';
import { monotonicMs } from '../clock.ts';
import { describeError } from '../errors.ts';
import { deliveryFor } from './destinations/registry.ts';
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
import { type Route, routesFor, targetIdentity } from './routes.ts';
import { createSender, type DeliveryContext, type QueueOptions, type Sender } from './sender.ts';

export interface NotifierOptions
  extends Omit<QueueOptions, 'label'>,
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
 * Tells the chat what happened: alerts (crash, hang, loop, failing, stopped), installed and failed updates,
 * maintenance as it begins and ends (`instance:maintenance-pending`, `instance:maintenance-done`), disk space going low and coming
 * back (`daemon:disk-low`, `daemon:disk-recovered`) and any `instance:notice`, each to
 * every route that wants its kind and instance, in its destination's format. One queue per destination, so a 429 on
 * one holds up no other. Fire and forget: the handlers only queue, so an emitter never waits or sees an error.
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
        const ctx: DeliveryContext = { format: r.format, timeoutMs, maxAnswerBytes, ca };
        const name = nameOf?.(n.key);
        if (name !== undefined) ctx.name = name;
        senders.get(targetIdentity(r.target))?.send(deliveryFor(r.target, n, ctx));
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
