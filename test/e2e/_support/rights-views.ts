import { request } from 'node:http';
import { can, type Principal, principalName } from '../../../src/auth/can.ts';
import { mayManage } from '../../../src/auth/may-manage.ts';
import { PERMISSIONS } from '../../../src/auth/permissions.ts';
import type { UsersDb } from '../../../src/auth/users-file.ts';
import type { RunningDaemon } from '../../_support/daemon.ts';
import type { Answer } from './accounts.ts';
import { INSTANCES } from './rights.ts';

/**
 * The dashboard's routes that name no instance, and what each answers a client the dashboard's rule lets in. `view`:
 * only what it holds status.read on (the page's cards, `/events`' hello, the instance list, its rights); `open`:
 * anyone let in; `users`: users.manage somewhere first (the grant rule), each made harmless by what its handler
 * answers after that (a name that exists: 409; one that does not: 404), so the matrix changes nothing.
 */
export interface AccountRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Its path as ROUTE_DOCS (the OpenAPI document) names it. */
  doc: string;
  path: string;
  kind: 'view' | 'open' | 'users';
  body?: unknown;
  answers: readonly number[];
}

const route = (
  method: AccountRoute['method'],
  doc: string,
  kind: AccountRoute['kind'],
  more: Partial<AccountRoute> = {},
) => ({ method, doc, path: doc, kind, answers: [200], ...more }) as AccountRoute;

export const ACCOUNT_ROUTES: readonly AccountRoute[] = [
  route('GET', '/', 'view'),
  route('GET', '/events', 'view'),
  route('GET', '/api/instances', 'view'),
  route('GET', '/api/me', 'view'),
  route('GET', '/statechart.svg', 'open', { path: '/statechart.svg?view=operator' }),
  route('GET', '/dashboard/{file}', 'open', { path: '/dashboard/app.js' }),
  route('GET', '/api/users', 'users'),
  // u0 is in every generated users file.
  route('POST', '/api/users', 'users', { body: { name: 'u0', password: 'long-enough-1', roles: [] }, answers: [409] }),
  route('PUT', '/api/users/{name}/roles', 'users', {
    path: '/api/users/nobody/roles',
    body: { roles: [] },
    answers: [404],
  }),
  route('DELETE', '/api/users/{name}', 'users', { path: '/api/users/nobody', answers: [404] }),
];

/**
 * The request of `route` with `headers`: its answer, or for `/events` (a stream without end) its first event's data
 * as the body, once it came.
 */
export function accountRequest(d: RunningDaemon, r: AccountRoute, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(d.url);
  const body = r.body === undefined ? undefined : JSON.stringify(r.body);
  const sent = body === undefined ? headers : { ...headers, 'content-type': 'application/json' };
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: r.method, path: r.path, headers: sent },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          const hello = r.path === '/events' && res.statusCode === 200 && /^data: ?(.*)\n\n/m.exec(text);
          if (!hello) return;
          resolve({ status: 200, body: hello[1] ?? '' });
          req.destroy();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', () => undefined);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The instance keys an answer of a `view` route shows. */
function shown(r: AccountRoute, body: string): string[] {
  if (r.path === '/') return [...body.matchAll(/<article class="card" data-key="([^"]+)"/g)].map((m) => m[1] ?? '');
  if (r.path === '/api/me') return Object.keys((JSON.parse(body) as { permissions: object }).permissions);
  const list = r.path === '/events' ? (JSON.parse(body) as { instances: unknown }).instances : JSON.parse(body);
  return (list as Array<{ key: string }>).map((s) => s.key);
}

/**
 * Why the answer `res` of `route`, for a client `p` let in, is not what can() (and the grant rule) say; undefined
 * when it is. A refusal must be 403 naming the permission.
 */
export function wrongAnswer(r: AccountRoute, p: Principal, db: UsersDb, res: Answer): string | undefined {
  const refusal = r.kind === 'users' ? mayManage(p, { action: 'list' }, db, INSTANCES) : undefined;
  if (refusal) {
    const body = JSON.parse(res.body) as { permission?: unknown; error?: unknown };
    return res.status === 403 && body.permission === refusal.permission && String(body.error).includes(' may not ')
      ? undefined
      : `expected 403 naming ${refusal.permission}`;
  }
  if (!r.answers.includes(res.status)) return `expected ${r.answers.join(' or ')}`;
  if (r.kind === 'users' && r.method === 'GET') {
    const names = (JSON.parse(res.body) as Array<{ name: string }>).map((u) => u.name);
    return JSON.stringify(names) === JSON.stringify([...db.users.keys()]) ? undefined : 'expected every user listed';
  }
  if (r.kind !== 'view') return undefined;
  const sees = INSTANCES.filter((i) => can(p, 'status.read', i, db));
  if (JSON.stringify(shown(r, res.body)) !== JSON.stringify(sees)) return `expected the instances ${sees.join(', ')}`;
  if (r.path !== '/api/me') return undefined;
  const me = JSON.parse(res.body) as { user: unknown; permissions: Record<string, string[]> };
  const held = Object.fromEntries(sees.map((i) => [i, PERMISSIONS.filter((perm) => can(p, perm, i, db))]));
  if (me.user !== principalName(p)) return `expected the user ${principalName(p)}`;
  return JSON.stringify(me.permissions) === JSON.stringify(held)
    ? undefined
    : `expected the rights ${JSON.stringify(held)}`;
}
