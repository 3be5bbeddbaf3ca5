import type { Context } from 'hono';
import { Hono } from 'hono';
import type { Bus } from '../bus.ts';
import { setCapped } from '../capped-map.ts';
import { monotonicMs } from '../clock.ts';
import { commandProblem, MAX_COMMAND_BYTES } from '../config/sections/console-hub.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { ConsoleError } from '../process/console-fifo.ts';
import type { InstanceControl } from '../supervisor/contract.ts';
import { adminAccess } from './admin-auth.ts';
import { DASHBOARD_HEADER, type DashboardEnv, dashboardInstance } from './api-routes.ts';
import { type Answer, auditControl, type ControlRequest } from './control.ts';
import type { HttpDeps } from './deps.ts';
import { apiToken, type InstanceEnv } from './instance-auth.ts';
import { limitBody, remoteAddress, shownKey } from './request-info.ts';
import { needs } from './rights.ts';
import { errors, type RouteDoc } from './route-doc.ts';

const WINDOW_MS = 60_000;
const MAX_CALLERS = 1000;

/** `Console.CommandsPerMinute` per caller (instance, user and address), in any 60 s; false takes nothing. */
export function createConsoleRate() {
  const sent = new Map<string, number[]>();
  return {
    admit(caller: string, perMinute: number, now = monotonicMs()): boolean {
      const times = (sent.get(caller) ?? []).filter((t) => now - t < WINDOW_MS);
      if (times.length >= perMinute) return false;
      // Bounded, so made-up callers cannot grow it: the least recently admitted goes, never this one.
      setCapped(sent, caller, [...times, now], MAX_CALLERS);
      return true;
    },
  };
}

/** A body holds one command line and a little JSON around it; anything larger is refused unread. */
const MAX_BODY_BYTES = MAX_COMMAND_BYTES * 4;

const CONSOLE_RESPONSES: RouteDoc['responses'] = {
  200: { description: 'sent to the server console', json: 'ConsoleSent' },
  400: 'no JSON {"command": …}, or a command that is empty, too long, or holds a newline or control character',
  ...errors(401),
  403: 'the credentials are refused, or the console is off for the instance (Console)',
  ...errors(404, 405),
  409: 'no server holds the console: none runs, or it started before Console was on',
  ...errors(413, 429, 500),
};

export const consoleRouteDocs: readonly RouteDoc[] = [
  {
    route: 'post /instances/{key}/console',
    tag: 'control',
    access: 'instance',
    summary:
      "send one command line to the server's console (full server-console rights; Console must be on); answered once written, the output is in the server log",
    body: 'ConsoleCommand',
    responses: { ...CONSOLE_RESPONSES, ...errors(503) },
  },
  {
    route: 'post /api/instances/{key}/console',
    tag: 'dashboard',
    access: 'admin',
    header: DASHBOARD_HEADER,
    summary: "the dashboard's console: answered as POST /instances/{key}/console, audited with the Admin user",
    body: 'ConsoleCommand',
    responses: CONSOLE_RESPONSES,
  },
];

type Caller = Pick<ControlRequest, 'user' | 'remote' | 'via'>;

/**
 * Answers one console request, from either route. Every request that got this far is audited with who sent it and
 * the command, and logged without the command: it may hold a secret.
 */
async function send(
  deps: { bus: Bus; log: Logger; rate: ReturnType<typeof createConsoleRate> },
  c: Context,
  instance: InstanceControl,
  user: string | undefined,
  via: Caller['via'],
): Promise<Response> {
  const body: unknown = await c.req.json().catch(() => undefined);
  const given = typeof body === 'object' && body !== null ? (body as { command?: unknown }).command : undefined;
  const command =
    typeof given === 'string' ? given : { error: 'expected a JSON body {"command": "<console command>"}' };
  const caller: Caller = { user, remote: remoteAddress(c), via };
  const answer = await attempt(deps.rate, instance, command, caller);
  const sent = typeof command === 'string' ? command.slice(0, MAX_COMMAND_BYTES) : null;
  auditControl(deps.bus, instance.key, 'console', caller, answer, { command: sent });
  const fields = { key: instance.key, via: caller.via, user: caller.user ?? '(loopback)', remote: caller.remote ?? '' };
  if ('error' in answer)
    deps.log.warn(`console command refused: ${answer.error}`, { ...fields, status: answer.status });
  else deps.log.info('console command sent', fields);
  return 'error' in answer ? c.json({ error: answer.error }, answer.status) : c.json({ sent: true });
}

async function attempt(
  rate: ReturnType<typeof createConsoleRate>,
  instance: InstanceControl,
  command: string | { error: string },
  caller: Caller,
): Promise<Answer> {
  const settings = instance.consoleSettings?.() ?? null;
  if (settings === null || instance.sendConsole === undefined)
    return { status: 403, error: `the console is off for instance ${shownKey(instance.key)} (set Console: true)` };
  if (typeof command !== 'string') return { status: 400, error: command.error };
  const problem = commandProblem(command);
  if (problem !== null) return { status: 400, error: `refused: ${problem}` };
  const who = `${instance.key}\u0000${caller.user ?? ''}\u0000${caller.remote ?? ''}`;
  if (!rate.admit(who, settings.commandsPerMinute))
    return { status: 429, error: `more than ${settings.commandsPerMinute} console commands a minute; wait a little` };
  try {
    await instance.sendConsole(command);
    return { status: 200 };
  } catch (err) {
    // Whatever went wrong is still answered and audited as this command's outcome.
    if (!(err instanceof ConsoleError)) return { status: 500, error: `cannot send the command: ${describeError(err)}` };
    const status = err.reason === 'invalid' ? 400 : err.reason === 'not-reading' ? 409 : 500;
    return { status, error: err.message };
  }
}

/** `POST /instances/:key/console` and the dashboard's `POST /api/instances/:key/console`; mounted at `/`. */
export function consoleRoutes(deps: HttpDeps): Hono {
  const rate = createConsoleRate();
  const ctx = { bus: deps.bus, log: deps.log, rate };
  const limit = limitBody(MAX_BODY_BYTES);

  const api = new Hono<InstanceEnv>();
  api.post('/instances/:key/console', apiToken(deps, 'control', 'POST /instances/:key/console'), limit, (c) =>
    send(ctx, c, c.var.instance, c.var.user, 'api'),
  );

  const dashboard = new Hono<DashboardEnv>();
  const mayConsole = needs<DashboardEnv>(deps, 'POST /instances/:key/console');
  dashboard.post('/api/instances/:key/console', adminAccess(deps), mayConsole, dashboardInstance(deps), limit, (c) =>
    send(ctx, c, c.var.instance, c.var.adminUser, 'dashboard'),
  );

  return new Hono().route('/', api).route('/', dashboard);
}
