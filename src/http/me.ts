import type { Context } from 'hono';
import type { AdminEnv } from './admin-auth.ts';
import type { HttpDeps } from './deps.ts';
import { heldOn } from './rights.ts';
import type { DashboardMe } from './schemas.ts';

/**
 * `GET /api/me` and the page's inlined copy: who the client is, and what it holds (by can()) on each instance it may
 * see. The page shows a card's buttons and panels by it; the daemon still asks can() at every request.
 */
export function meOf(
  c: Pick<Context<AdminEnv>, 'var'>,
  deps: Pick<HttpDeps, 'registry' | 'users' | 'bus'>,
): DashboardMe {
  const permissions: Record<string, string[]> = {};
  for (const i of deps.registry.list()) {
    const held = heldOn(c, deps, i.key);
    if (held.includes('status.read')) permissions[i.key] = held;
  }
  const p = c.var.principal;
  return {
    user: c.var.adminUser ?? null,
    kind: p === undefined ? null : p.kind,
    accounts: p !== undefined,
    session: c.var.session !== undefined,
    permissions,
  };
}
