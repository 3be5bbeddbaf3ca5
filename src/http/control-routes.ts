import { type Context, Hono } from 'hono';
import { describeError } from '../errors.ts';
import { authorize, refusal } from './authorize.ts';
import type { HttpDeps } from './deps.ts';
import type { ControlAction } from '../supervisor/contract.ts';
import { methodNotAllowed, remoteAddress, shownKey } from './request-info.ts';
import { errors, type RouteDoc } from './route-doc.ts';

const ACTIONS: readonly ControlAction[] = ['restart', 'update', 'stop', 'rollback'];

/** These routes for the OpenAPI document (route-doc.ts). */
export const controlRouteDocs: readonly RouteDoc[] = [
  ...ACTIONS.map(
    (action): RouteDoc => ({
      method: 'post',
      path: `/instances/{key}/${action}`,
      tag: 'control',
      access: 'instance',
      summary: `${action} the instance; taken at once and done in the background, or refused at once with the reason`,
      responses: { 200: 'taken (empty body)', ...errors(400, 401, 403, 404, 405, 409, 503) },
    }),
  ),
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
 * `/instances`. Every control request, accepted or refused, is audited on the bus (`control`).
 */
export function controlRoutes({ registry, bus, log }: HttpDeps): Hono {
  const app = new Hono();
  const control = (action: ControlAction) => (c: Context) => {
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
      audit(auth.status, auth.user);
      log.warn(`control ${action} refused: ${auth.reason}`, { key: shown, status: auth.status, remote: remote ?? '' });
      return refusal(c, auth.status, auth.reason);
    }
    // What can be told at once is answered at once: a request the machine would refuse, or that has nothing to act
    // on, is refused here with its reason instead of being accepted and then logged as refused.
    const refused = auth.instance.refusal?.(action) ?? null;
    if (refused !== null) {
      audit(409, auth.user, refused);
      log.warn(`control ${action} refused: ${refused}`, { key: shown, status: 409, remote: remote ?? '' });
      return c.json({ error: refused }, 409);
    }
    try {
      auth.instance.control(action);
    } catch (err) {
      // The contract says control() never throws; if it does, the audit still records the attempt.
      audit(500, auth.user);
      throw new Error(`control ${action} of instance ${key} failed: ${describeError(err)}`, { cause: err });
    }
    audit(200, auth.user);
    log.info(`control ${action} accepted`, { key, remote: remote ?? '' });
    return c.body('', 200);
  };
  for (const action of ACTIONS) {
    app.post(`/:key/${action}`, control(action));
    app.all(`/:key/${action}`, methodNotAllowed('POST'));
  }

  app.get('/:key/status', (c) => {
    const auth = authorize(c.req.header('authorization'), c.req.param('key'), registry, 'apiToken');
    if (!auth.ok) return refusal(c, auth.status, auth.reason);
    return c.json(auth.instance.status());
  });
  app.all('/:key/status', methodNotAllowed('GET, HEAD'));

  return app;
}
