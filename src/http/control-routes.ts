import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { CONTROL_ACTIONS } from '../../machines/instance.refusals.ts';
import { CONTROL_VERBS, type ControlVerb, carryOut, controlRequestOf, HOLD_DEFAULT_MINUTES, reply } from './control.ts';
import type { HttpDeps } from './deps.ts';
import { apiToken, checkinSecret, type InstanceEnv } from './instance-auth.ts';
import { errors, type QueryDoc, type RouteDoc } from './route-doc.ts';

const WHEN_DOC = {
  name: 'when',
  type: 'string',
  description:
    'restart and update: Now (graceful shutdown at once), RoundEnd (the server leaves when its round ends) or Empty (when it reports 0 players); forced after Maintenance.MaxDelayMinutes. A restart without it is immediate',
} as const;

const QUERY_DOCS: Partial<Record<ControlVerb, QueryDoc[]>> = {
  restart: [WHEN_DOC],
  update: [WHEN_DOC],
  rollback: [
    {
      name: 'withData',
      type: 'string',
      description:
        'true: also put back the data snapshot taken before the installed build was installed (the current data is snapshotted first); 409 when there is none',
    },
  ],
  restore: [
    {
      ...WHEN_DOC,
      description:
        "when the server is stopped for the restore: Now, RoundEnd or Empty, as a restart (default: the instance's Maintenance.When)",
    },
    {
      name: 'backup',
      type: 'string',
      description:
        'required: the snapshot to put back (GET /instances/{key}/backups lists them); the server is stopped gracefully (at the moment `when` names), the current data snapshotted, the snapshot restored and the server started',
    },
  ],
};

/** The query parameters a control verb reads, for the OpenAPI document of both control routes. */
export const controlQueryDocs = (action: ControlVerb): { query?: QueryDoc[] } =>
  QUERY_DOCS[action] ? { query: QUERY_DOCS[action] } : {};

export const controlRouteDocs: readonly RouteDoc[] = [
  ...CONTROL_ACTIONS.map(
    (action): RouteDoc => ({
      route: `post /instances/{key}/${action}`,
      tag: 'control',
      access: 'instance',
      summary: `${action} the instance; taken at once and done in the background, or refused at once with the reason`,
      ...controlQueryDocs(action),
      responses: { 200: 'taken (empty body)', ...errors(400, 401, 403, 404, 405, 409, 503) },
    }),
  ),
  {
    route: 'post /instances/{key}/hold',
    tag: 'control',
    access: 'instance',
    summary:
      'hold scheduled restarts and automatic update installs (a found update is still remembered); crash and hang handling go on. A hold ends by itself',
    query: [
      { name: 'minutes', type: 'string', description: `how long (fractions allowed; default ${HOLD_DEFAULT_MINUTES})` },
      { name: 'reason', type: 'string', description: 'shown in the status and the dashboard' },
    ],
    responses: { 200: 'held (empty body)', ...errors(400, 401, 403, 404, 405, 409, 503) },
  },
  {
    route: 'post /instances/{key}/release',
    tag: 'control',
    access: 'instance',
    summary: 'end a hold now; what it held back goes ahead by its policy',
    responses: { 200: 'released (empty body)', ...errors(401, 403, 404, 405, 409, 503) },
  },
  {
    route: 'get /instances/{key}/status',
    tag: 'control',
    access: 'instance',
    summary: "the instance's status",
    responses: {
      200: { description: 'the status JSON', json: 'InstanceStatus' },
      ...errors(400, 401, 403, 404, 405, 503),
    },
  },
  {
    route: 'post /server_api/{key}/ping',
    tag: 'check-in',
    access: 'launch',
    summary: "the game server's check-in",
    responses: { 200: 'checked in (empty body)', ...errors(400, 401, 403, 404, 405, 503) },
  },
];

/** `POST /:key/<verb>` and `GET /:key/status`, mounted at `/instances`. */
export function controlRoutes(deps: HttpDeps): Hono<InstanceEnv> {
  const app = new Hono<InstanceEnv>();
  for (const verb of CONTROL_VERBS) {
    app.post(`/:key/${verb}`, apiToken(deps, 'control', `POST /instances/:key/${verb}`), async (c) => {
      const { instance, user } = c.var;
      // A hold without a reason says whose it is; an ApiToken names no one.
      const holdReason = user === instance.key ? '' : `held by ${user}`;
      const req = controlRequestOf(c, instance.key, user, { holdReason, via: 'api' });
      return reply(c, await carryOut(deps, instance, verb, req));
    });
  }

  app.get('/:key/status', apiToken(deps, 'status', 'GET /instances/:key/status'), (c) =>
    c.json(c.var.instance.status()),
  );

  return app;
}

/** `POST /:key/ping`, mounted at `/server_api`; an accepted check-in's connection is never evicted. */
export function pingRoutes(deps: HttpDeps): Hono<InstanceEnv> {
  const app = new Hono<InstanceEnv>();
  app.post('/:key/ping', checkinSecret(deps), (c) => {
    c.var.instance.checkin();
    // No socket under app.request() (route tests).
    const socket = (c.env as Partial<HttpBindings> | undefined)?.incoming?.socket;
    if (socket) deps.trustCheckin?.(socket);
    return c.body('', 200);
  });
  return app;
}
