import type { Context } from 'hono';
import { CONTROL_ACTIONS, takesOption } from '../../machines/instance.refusals.ts';
import { MAINTENANCE_POLICIES } from '../../machines/instance.types.ts';
import type { Bus } from '../bus.ts';
import { MAX_DELAY_MINUTES } from '../config/sections/maintenance.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { requester } from '../notify/messages.ts';
import type { ControlAction, InstanceControl, MaintenancePolicy } from '../supervisor/contract.ts';
import { remoteAddress, shownKey } from './request-info.ts';

/** What the control routes carry out: the instance's control actions, then holding and releasing its maintenance. */
export type ControlVerb = ControlAction | 'hold' | 'release';
export const CONTROL_VERBS: readonly ControlVerb[] = [...CONTROL_ACTIONS, 'hold', 'release'];

/** A hold without `minutes` lasts an hour; the longest is MAX_DELAY_MINUTES, the longest timer (about 24 days). */
export const HOLD_DEFAULT_MINUTES = 60;

/** A route's answer: `body` as JSON (none: an empty 200), or `{ error }`. */
export type Answer<T = unknown> =
  | { status: 200 | 201; body?: T }
  | { status: 400 | 403 | 404 | 409 | 413 | 429 | 500 | 507; error: string };
export const reply = (c: Context, a: Answer): Response =>
  'error' in a
    ? c.json({ error: a.error }, a.status)
    : a.body === undefined
      ? c.body('', a.status)
      : c.json(a.body, a.status);

/**
 * A control request whose credentials were accepted. `user`: whom they named (undefined: a loopback client); `by`:
 * who asked, in words, for the chat message (`with its API token from 127.0.0.1`); `holdReason`: a hold's reason
 * when the request gives none; `via`: the route, for the daemon's log line.
 */
export interface ControlRequest {
  query: (name: string) => string | undefined;
  user: string | undefined;
  remote: string | undefined;
  by: string;
  holdReason: string;
  via: 'api' | 'dashboard';
}

export type Caller = Pick<ControlRequest, 'user' | 'remote'>;

export function controlRequestOf(
  c: Context,
  key: string,
  user: string | undefined,
  how: Pick<ControlRequest, 'holdReason' | 'via'>,
): ControlRequest {
  const remote = remoteAddress(c);
  return { query: (name) => c.req.query(name), user, remote, by: requester(key, user, remote), ...how };
}

export const NO_BACKUPS = 'this daemon keeps no backups for the instance';

const isPolicy = (when: string): when is MaintenancePolicy =>
  (MAINTENANCE_POLICIES as readonly string[]).includes(when);

/**
 * What a verb asks of the instance, or why it cannot be done. The instance is asked for its refusal before anything
 * is sent, so a request the machine would refuse is answered 409 with the reason rather than taken and then refused.
 */
async function perform(instance: InstanceControl, verb: ControlVerb, req: ControlRequest): Promise<Answer> {
  if (verb === 'hold') {
    const text = req.query('minutes');
    const minutes = text === undefined ? HOLD_DEFAULT_MINUTES : Number(text);
    if (!Number.isFinite(minutes) || minutes <= 0 || minutes > MAX_DELAY_MINUTES)
      return { status: 400, error: `minutes must be a positive number up to ${MAX_DELAY_MINUTES}, not "${text}"` };
    if (instance.hold === undefined) return { status: 409, error: 'this instance cannot be held' };
    const refused = instance.hold(minutes, (req.query('reason') ?? req.holdReason).slice(0, 200));
    return refused === null ? { status: 200 } : { status: 409, error: refused };
  }
  if (verb === 'release')
    return instance.release?.() ? { status: 200 } : { status: 409, error: 'nothing is held for this instance' };
  const when = req.query('when');
  if (when !== undefined && !isPolicy(when))
    return { status: 400, error: `when must be one of ${MAINTENANCE_POLICIES.join(', ')}, not "${when}"` };
  if (when !== undefined && !takesOption(verb, 'when'))
    return { status: 400, error: `when applies to restart, update and restore only, not ${verb}` };
  const flag = req.query('withData');
  const withData = flag !== undefined && flag !== 'false' && flag !== '0';
  if (withData && !['true', '1', ''].includes(flag))
    return { status: 400, error: `withData must be true or false, not "${flag}"` };
  if (withData && !takesOption(verb, 'withData'))
    return { status: 400, error: `withData applies to rollback only, not ${verb}` };
  const snapshot = req.query('backup');
  if (verb === 'restore' && !snapshot)
    return { status: 400, error: 'restore needs the backup to put back: ?backup=<id> (watchdog backups lists them)' };
  if (snapshot !== undefined && !takesOption(verb, 'backup'))
    return { status: 400, error: `backup applies to restore only, not ${verb}` };
  const refused = instance.refusal?.(verb) ?? null;
  if (refused !== null) return { status: 409, error: refused };
  if (withData || snapshot !== undefined) {
    const backups = instance.backups;
    if (backups === undefined) return { status: 409, error: NO_BACKUPS };
    if (snapshot !== undefined && !(await backups.has(snapshot)))
      return {
        status: 409,
        error: `there is no backup ${snapshot} of ${shownKey(instance.key)} (watchdog backups lists them)`,
      };
    if (snapshot === undefined && (await backups.forRollback()) === null)
      return {
        status: 409,
        error:
          'no snapshot was taken before the installed build was installed; roll back without withData to keep the current data',
      };
  }
  instance.control(verb, { when, by: req.by, withData, snapshot });
  return { status: 200 };
}

/** A request past its credentials, for the audit log and the dashboard: a verb, backup, console command or download. */
export function auditControl(
  bus: Bus,
  key: string,
  action: string,
  req: Caller,
  answer: { status: number; error?: string },
  extra: { command?: string | null; file?: string } = {},
): void {
  bus.emit('instance:control', {
    key: shownKey(key),
    action,
    user: req.user === undefined ? undefined : shownKey(req.user),
    remote: req.remote,
    status: answer.status,
    result: answer.status < 300 ? 'accepted' : 'refused',
    ...(answer.error === undefined ? {} : { reason: answer.error }),
    ...extra,
    at: Date.now(),
  });
}

/** Carries out a control request from either route: performs it or says why not, audits it, and logs it. */
export async function carryOut(
  deps: { bus: Bus; log: Logger },
  instance: InstanceControl,
  verb: ControlVerb,
  req: ControlRequest,
): Promise<Answer> {
  let answer: Answer;
  try {
    answer = await perform(instance, verb, req);
  } catch (err) {
    // The contract says control() never throws; if it does, the audit still records the attempt.
    auditControl(deps.bus, instance.key, verb, req, { status: 500 });
    throw new Error(`control ${verb} of instance ${instance.key} failed: ${describeError(err)}`, { cause: err });
  }
  auditControl(deps.bus, instance.key, verb, req, answer);
  const fields = { key: instance.key, via: req.via, user: req.user ?? '(loopback)', remote: req.remote ?? '' };
  if ('error' in answer)
    deps.log.warn(`control ${verb} refused: ${answer.error}`, { ...fields, status: answer.status });
  else deps.log.info(`control ${verb} accepted`, fields);
  return answer;
}
