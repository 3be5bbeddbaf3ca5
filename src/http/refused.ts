import { isIP } from 'node:net';
import type { Context } from 'hono';
import type { Permission } from '../auth/permissions.ts';
import type { Bus, RefusedRoute } from '../bus.ts';
import { plainAddress, remoteAddress, shownKey } from './request-info.ts';

/**
 * A request refused before its credentials were accepted, put on the bus rather than logged: the daemon's log and
 * the audit log rate-limit it by source. The action is the request's method and path unless given.
 */
export function reportRefused(
  bus: Bus,
  c: Context,
  what: {
    route: RefusedRoute;
    action?: string;
    key?: string;
    user?: string;
    status: number;
    reason: string;
    permission?: Permission;
  },
): void {
  bus.emit('daemon:request-refused', {
    route: what.route,
    action: shownKey(what.action ?? `${c.req.method} ${c.req.path}`.slice(0, 200)),
    key: what.key === undefined ? undefined : shownKey(what.key),
    user: what.user === undefined ? undefined : shownKey(what.user),
    remote: remoteAddress(c),
    status: what.status,
    reason: what.reason,
    ...(what.permission === undefined ? {} : { permission: what.permission }),
    at: Date.now(),
  });
}

/** Where refusals are counted: an IPv6 client by its /64, so a stranger cycling through its addresses is one source. */
export function sourceOf(remote: string | undefined): string {
  if (remote === undefined || remote === '') return 'unknown';
  const address = plainAddress(remote) ?? remote;
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** `1,234 refused requests from 127.0.0.1 in the last 60 s`. */
export function refusedSummary(source: string, count: number, seconds: number): string {
  const n = count.toLocaleString('en-US');
  return `${n} refused request${count === 1 ? '' : 's'} from ${source} in the last ${seconds.toLocaleString('en-US')} s`;
}
