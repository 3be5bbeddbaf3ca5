import type { Context } from 'hono';
import type { Bus, RefusedRoute } from '../bus.ts';
import { remoteAddress, shownKey } from './request-info.ts';

/**
 * Puts a request refused before its credentials were accepted on the bus (`request:refused`). Routes report it
 * here instead of logging it: the daemon's log and the audit log rate-limit it by source, and metrics count it.
 */
export function reportRefused(
  bus: Bus | undefined,
  c: Context,
  what: { route: RefusedRoute; action: string; key?: string; user?: string; status: number; reason: string },
): void {
  bus?.emit('request:refused', {
    route: what.route,
    action: shownKey(what.action),
    key: what.key === undefined ? undefined : shownKey(what.key),
    user: what.user === undefined ? undefined : shownKey(what.user),
    remote: remoteAddress(c),
    status: what.status,
    reason: what.reason,
    at: Date.now(),
  });
}
