import type { Permission } from '../../../src/auth/permissions.ts';
import { ROUTE_DOCS } from '../../../src/http/openapi-routes.ts';
import type { RouteDoc } from '../../../src/http/route-doc.ts';
import { type InstanceRoute, ROUTE_PERMISSIONS } from '../../../src/http/route-permissions.ts';

/**
 * Which credentials a route takes: `instance` the ApiToken, a user or a key; `logs` those and what the dashboard
 * takes; `dashboard` the dashboard's (a user, a key, the Admin login, a session, a trusted proxy's user).
 */
export type Family = 'instance' | 'logs' | 'dashboard';

/** One route the matrix drives, and how to make its request harmless once let in. */
export interface MatrixRoute {
  method: 'GET' | 'POST';
  /** Its path as ROUTE_DOCS (the OpenAPI document) names it. */
  doc: string;
  family: Family;
  permission: Permission;
  /** `*`: the route needs the permission on every instance (a grant without `@<instance>`). */
  everywhere?: true;
  /** The request's path on instance `key`. */
  path: (key: string) => string;
  body?: string;
  /**
   * What the handler answers once the rights check let the request in: each mutating request carries a parameter
   * its handler refuses (400), or meets a state that refuses it (409, 507), so the matrix changes nothing.
   */
  answers: readonly number[];
}

/** Per verb: the query its handler refuses after the rights check, and that answer. */
const HARMLESS: Record<string, { query: string; answers: readonly number[] }> = {
  restart: { query: '?when=Never', answers: [400] },
  update: { query: '?when=Never', answers: [400] },
  restore: { query: '?when=Never', answers: [400] },
  // `when` applies to restart, update and restore only.
  stop: { query: '?when=Now', answers: [400] },
  rollback: { query: '?when=Now', answers: [400] },
  hold: { query: '?minutes=0', answers: [400] },
  // Nothing is ever held by the matrix; a named test's hold may still be there.
  release: { query: '', answers: [200, 409] },
  // No body: 400. Asking for the console first, the right's 403 comes before the console's own 403.
  console: { query: '', answers: [400] },
  status: { query: '', answers: [200] },
  logs: { query: '?lines=1', answers: [200] },
  log: { query: '?n=1', answers: [200] },
  files: { query: '', answers: [200] },
  // A backup margin no disk has: 507, nothing written.
  'POST backups': { query: '', answers: [507] },
  'GET backups': { query: '', answers: [200] },
};

function harmless(method: string, verb: string): { query: string; answers: readonly number[] } {
  const h = HARMLESS[`${method} ${verb}`] ?? HARMLESS[verb];
  if (!h) throw new Error(`no harmless request for ${method} ${verb}: add it to HARMLESS`);
  return h;
}

/** The instance route of ROUTE_PERMISSIONS `row`, and its dashboard twin when there is one. */
function routesOf(row: InstanceRoute): MatrixRoute[] {
  const [method, pattern] = row.split(' ') as ['GET' | 'POST', string];
  const verb = /^\/instances\/:key\/(\w+)/.exec(pattern)?.[1] ?? '';
  const permission = ROUTE_PERMISSIONS[row];
  const { query, answers } = harmless(method, verb);
  // files/* is driven as the shared folder `dumps` (a listing: 200).
  const tail = verb === 'files' ? 'files/dumps' : verb;
  const own: MatrixRoute = {
    method,
    doc: pattern.replace(':key', '{key}').replace('/*', '/{path}'),
    family: verb === 'logs' ? 'logs' : 'instance',
    permission,
    path: (key) => `/instances/${key}/${tail}${query}`,
    answers,
  };
  // The dashboard's twin: /api/instances/:key/<verb>, but the log tail is `log` and there is no status route.
  if (verb === 'status') return [own];
  const twin = verb === 'logs' ? 'log' : verb;
  const t = harmless(method, twin);
  const dashTail = twin === 'files' ? 'files/dumps' : twin;
  return [
    own,
    {
      method,
      doc: `/api${own.doc.replace('/logs', '/log')}`,
      family: 'dashboard',
      permission,
      path: (key) => `/api/instances/${key}/${dashTail}${t.query}`,
      answers: t.answers,
    },
  ];
}

/** Every route the matrix drives: each row of ROUTE_PERMISSIONS, its dashboard twin, and /metrics (on every instance). */
export const MATRIX_ROUTES: readonly MatrixRoute[] = [
  ...(Object.keys(ROUTE_PERMISSIONS) as InstanceRoute[]).flatMap(routesOf),
  {
    method: 'GET',
    doc: '/metrics',
    family: 'dashboard',
    permission: 'status.read',
    everywhere: true,
    path: () => '/metrics',
    answers: [200],
  },
];

/**
 * The routes of the OpenAPI document that name an instance and take a credential (not the check-in, whose secret
 * is the launch's, nor the build CDN's binaries): the matrix must drive each, so a route added without a row fails.
 */
/** `GET /instances/{key}/status`: a row's route as the matrix names it. */
export const upperRoute = (r: RouteDoc): string => r.route.replace(/^\w+/, (m) => m.toUpperCase());

export function keyedRoutesOfDocs(): string[] {
  return ROUTE_DOCS.filter((r) => r.route.includes('{key}') && r.access !== 'launch' && r.access !== 'none').map(
    upperRoute,
  );
}
