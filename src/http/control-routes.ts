import { type Context, Hono } from 'hono';
import { MAINTENANCE_POLICIES, MAX_DELAY_MINUTES } from '../config/maintenance-schema.ts';
import { describeError } from '../errors.ts';
import { requester } from '../notify/messages.ts';
import { authorize, refusal } from './authorize.ts';
import { reportRefused } from './refused.ts';
import type { HttpDeps } from './deps.ts';
import type { ControlAction, InstanceControl, MaintenancePolicy } from '../supervisor/contract.ts';
import { methodNotAllowed, remoteAddress, shownKey } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

const ACTIONS: readonly ControlAction[] = ['restart', 'update', 'stop', 'rollback'];
const POLICIES: readonly MaintenancePolicy[] = MAINTENANCE_POLICIES;
/** A hold without `minutes` lasts an hour; the longest is the longest timer (about 24 days). */
const HOLD_DEFAULT_MINUTES = 60;
const HOLD_MAX_MINUTES = MAX_DELAY_MINUTES;

/** A request the route cannot take: its status and why. */
type Refused = { status: 400 | 409; error: string };
/** Does what the request asks of the instance, or says why it cannot. */
type Perform = (
  instance: InstanceControl,
  query: (name: string) => string | undefined,
  /** Who asked: `with its API token from 127.0.0.1`. */
  by: string,
) => Refused | null;

const WHEN_DOC = {
  name: 'when',
  type: 'string',
  description:
    'restart and update: Now (graceful shutdown at once), RoundEnd (the server leaves when its round ends) or Empty (when it reports 0 players); forced after Maintenance.MaxDelayMinutes. A restart without it is immediate',
} as const;

function performControl(action: ControlAction): Perform {
  return (instance, query, by) => {
    const when = query('when');
    if (when !== undefined && !(POLICIES as readonly string[]).includes(when))
      return { status: 400, error: `when must be one of ${POLICIES.join(', ')}, not "${when}"` };
    if (when !== undefined && action !== 'restart' && action !== 'update')
      return { status: 400, error: `when applies to restart and update only, not ${action}` };
    const refused = instance.refusal?.(action) ?? null;
    if (refused !== null) return { status: 409, error: refused };
    instance.control(action, { when: when as MaintenancePolicy | undefined, by });
    return null;
  };
}

const performHold: Perform = (instance, query) => {
  const text = query('minutes');
  const minutes = text === undefined ? HOLD_DEFAULT_MINUTES : Number(text);
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > HOLD_MAX_MINUTES)
    return { status: 400, error: `minutes must be a positive number up to ${HOLD_MAX_MINUTES}, not "${text}"` };
  if (instance.hold === undefined) return { status: 409, error: 'this instance cannot be held' };
  instance.hold(minutes, (query('reason') ?? '').slice(0, 200));
  return null;
};

const performRelease: Perform = (instance) =>
  instance.release?.() ? null : { status: 409, error: 'nothing is held for this instance' };

/** These routes for the OpenAPI document (route-doc.ts). */
export const controlRouteDocs: readonly RouteDoc[] = [
  ...ACTIONS.map(
    (action): RouteDoc => ({
      method: 'post',
      path: `/instances/{key}/${action}`,
      tag: 'control',
      access: 'instance',
      summary: `${action} the instance; taken at once and done in the background, or refused at once with the reason`,
      ...(action === 'restart' || action === 'update' ? { query: [WHEN_DOC] } : {}),
      responses: { 200: 'taken (empty body)', ...errors(400, 401, 403, 404, 405, 409, 503) },
    }),
  ),
  {
    method: 'post',
    path: '/instances/{key}/hold',
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
    method: 'post',
    path: '/instances/{key}/release',
    tag: 'control',
    access: 'instance',
    summary: 'end a hold now; what it held back goes ahead by its policy',
    responses: { 200: 'released (empty body)', ...errors(401, 403, 404, 405, 409, 503) },
  },
  {
    method: 'get',
    path: '/instances/{key}/status',
    tag: 'control',
    access: 'instance',
    summary: "the instance's status",
    responses: {
      200: { description: 'the status JSON', json: 'InstanceStatus' },
      ...errors(400, 401, 403, 404, 405, 503),
    },
  },
];

/**
 * `POST /:key/{restart,update,stop,rollback}` and `GET /:key/status`, Basic `<key>:<ApiToken>`; mounted at
 * `/instances`. Every control request whose credentials were accepted is audited on the bus (`control`), accepted or
 * refused; one refused before that is a `request:refused`, rate-limited by source where it is written.
 */
export function controlRoutes({ registry, bus, log }: HttpDeps): Hono {
  const app = new Hono();
  const control = (action: string, perform: Perform) => (c: Context) => {
    const key = c.req.param('key') ?? '';
    const remote = remoteAddress(c);
    const auth = authorize(c.req.header('authorization'), key, registry, 'apiToken');
    const shown = shownKey(key);
    const audit = (status: number, user: string | undefined, reason?: string) =>
      bus.emit('control', {
        key: shown,
        action,
        user: user === undefined ? undefined : shownKey(user),
        remote,
        status,
        result: status === 200 ? 'accepted' : 'refused',
        ...(reason === undefined ? {} : { reason }),
        at: Date.now(),
      });

    if (!auth.ok) {
      // Anyone can send these, as fast as they like: rate-limited in the audit and the daemon's log (refused.ts).
      reportRefused(bus, c, {
        route: 'control',
        action,
        key,
        user: auth.user,
        status: auth.status,
        reason: auth.reason,
      });
      return refusal(c, auth.status, auth.reason);
    }
    // What can be told at once is answered at once: a request the machine would refuse, or that has nothing to act
    // on, is refused here with its reason instead of being accepted and then logged as refused.
    let refused: Refused | null;
    try {
      refused = perform(auth.instance, (name) => c.req.query(name), requester(key, auth.user, remote));
    } catch (err) {
      // The contract says control() never throws; if it does, the audit still records the attempt.
      audit(500, auth.user);
      throw new Error(`control ${action} of instance ${key} failed: ${describeError(err)}`, { cause: err });
    }
    if (refused !== null) {
      audit(refused.status, auth.user, refused.error);
      log.warn(`control ${action} refused: ${refused.error}`, {
        key: shown,
        status: refused.status,
        remote: remote ?? '',
      });
      return c.json({ error: refused.error }, refused.status);
    }
    audit(200, auth.user);
    log.info(`control ${action} accepted`, { key, remote: remote ?? '' });
    return c.body('', 200);
  };
  const routes: Array<[string, Perform]> = [
    ...ACTIONS.map((a): [string, Perform] => [a, performControl(a)]),
    ['hold', performHold],
    ['release', performRelease],
  ];
  for (const [action, perform] of routes) {
    app.post(`/:key/${action}`, control(action, perform));
    app.all(`/:key/${action}`, methodNotAllowed('POST'));
  }

  app.get('/:key/status', (c) => {
    const key = c.req.param('key');
    const auth = authorize(c.req.header('authorization'), key, registry, 'apiToken');
    if (!auth.ok) {
      reportRefused(bus, c, {
        route: 'status',
        action: 'status',
        key,
        user: auth.user,
        status: auth.status,
        reason: auth.reason,
      });
      return refusal(c, auth.status, auth.reason);
    }
    return c.json(auth.instance.status());
  });
  app.all('/:key/status', methodNotAllowed('GET, HEAD'));

  return app;
}
