import { FetchError, type FetchOptions, ofetch } from 'ofetch';
import { rootCause } from '../../errors.ts';
import type { ControlAction } from '../../supervisor/contract.ts';
import type { BackupListing } from '../../supervisor/status.ts';
import { ClientError } from './errors.ts';
import type { StatusRow } from './status-table.ts';

/** One instance on one daemon, with the Authorization header to send for it (its token, or a kept login). */
export interface Endpoint {
  url: string;
  key: string;
  authorization: string;
}

export const TIMEOUT_MS = 10_000;

/** The Authorization header for the dashboard's routes: Basic of `--user`/`--password`, or a kept login's key. */
export type AdminLogin = Pick<Endpoint, 'authorization'>;

export const basic = (key: string, token: string) => `Basic ${Buffer.from(`${key}:${token}`).toString('base64')}`;
/** `<url>/instances/<key>/<what>`. */
export const instancePath = (ep: Pick<Endpoint, 'url' | 'key'>, what: string) =>
  `${ep.url}/instances/${encodeURIComponent(ep.key)}/${what}`;

/** A GET answered 503 (a daemon or instance still starting: nothing done) is asked again each second, ten times. */
const STARTING_RETRY: FetchOptions = { retry: 10, retryStatusCodes: [503], retryDelay: 1000 };

/** One request to the daemon, read as JSON (text when it is not); a failure is a ClientError naming `what`. */
export async function request<T>(
  url: string,
  ep: Pick<Endpoint, 'url' | 'key'>,
  what: string,
  opts: {
    method?: 'GET' | 'POST';
    query?: Record<string, string>;
    body?: Record<string, unknown>;
    timeoutMs?: number;
    /** The Authorization header; none when undefined. */
    authorization?: string;
    /** The Cookie header (a dashboard session, `watchdog login`); none when undefined. */
    cookie?: string;
    /** Which credentials a 401 refused, for its message. */
    as?: 'token' | 'admin';
  } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? TIMEOUT_MS;
  try {
    return await ofetch<T>(url, {
      method: opts.method ?? 'GET',
      headers: {
        ...(opts.authorization === undefined ? {} : { authorization: opts.authorization }),
        ...(opts.cookie === undefined ? {} : { cookie: opts.cookie }),
      },
      query: opts.query,
      body: opts.body,
      ...((opts.method ?? 'GET') === 'GET' ? STARTING_RETRY : { retry: 0 }),
      timeout: timeoutMs,
      responseType: 'json',
    });
  } catch (err) {
    throw explainFailure(err, ep, what, timeoutMs, opts.as);
  }
}

/** `GET /instances/<key>/status`. */
export async function fetchStatus(ep: Endpoint, timeoutMs = TIMEOUT_MS): Promise<StatusRow> {
  const body = await request<unknown>(instancePath(ep, 'status'), ep, 'status', {
    authorization: ep.authorization,
    timeoutMs,
  });
  if (!isStatus(body)) {
    throw new ClientError(
      `the server at ${ep.url} answered the status of ${ep.key} with something that is not watchdog status JSON — is --url right?`,
    );
  }
  return body;
}

/** `GET /instances/<key>/backups`: the instance's snapshots, newest first. */
export const fetchBackups = (ep: Endpoint): Promise<BackupListing[]> =>
  request(instancePath(ep, 'backups'), ep, 'the backup list', { authorization: ep.authorization });

/** `POST /instances/<key>/<action>`, with `when`, `withData`, `backup` or `minutes` and `reason` in `query`. */
export const postControl = (ep: Endpoint, action: ControlAction | 'hold' | 'release', query?: Record<string, string>) =>
  request<unknown>(instancePath(ep, action), ep, action, { method: 'POST', authorization: ep.authorization, query });

/** `GET /api/instances`, as Admin (or, without credentials, as a loopback client of a daemon with no Admin). */
export async function fetchAllStatus(
  url: string,
  admin: AdminLogin | undefined,
  timeoutMs = TIMEOUT_MS,
): Promise<StatusRow[]> {
  const body = await request<unknown>(`${url}/api/instances`, { url, key: 'every instance' }, 'status', {
    ...(admin ? { authorization: admin.authorization } : {}),
    timeoutMs,
    as: 'admin',
  });
  if (!Array.isArray(body) || !body.every(isStatus)) {
    throw new ClientError(
      `the server at ${url} answered /api/instances with something that is not a list of watchdog statuses — is --url right?`,
    );
  }
  return body;
}

/** The daemon's refusal inside a ClientError: its HTTP status and the `error` it said; neither for anything else. */
export function refusal(err: unknown): { status?: number; said?: unknown } {
  const cause = err instanceof ClientError ? err.cause : undefined;
  if (!(cause instanceof FetchError)) return {};
  return { status: cause.status, said: (cause.data as { error?: unknown } | undefined)?.error };
}

const isStatus = (body: unknown): body is StatusRow =>
  typeof (body as StatusRow | null)?.key === 'string' && typeof (body as StatusRow).state === 'string';

/** Every `code` on an error's cause chain, including the attempts inside an AggregateError (IPv6 then IPv4). */
function errorCodes(err: unknown, depth = 0): string[] {
  if (!(err instanceof Error) || depth > 5) return [];
  const code: unknown = (err as Error & { code?: unknown }).code;
  const own = typeof code === 'string' ? [code] : [];
  const nested = err instanceof AggregateError ? err.errors.flatMap((e: unknown) => errorCodes(e, depth + 1)) : [];
  return [...own, ...nested, ...errorCodes(err.cause, depth + 1)];
}

/** A short reason from an error body: plain text, or the `error`/`message` of a JSON body. */
function bodyDetail(data: unknown): string {
  const { error, message } = (data ?? {}) as { error?: unknown; message?: unknown };
  const text = [data, error, message].find((t): t is string => typeof t === 'string')?.trim() ?? '';
  return text ? `: ${text.slice(0, 200)}` : '';
}

/** Turns an ofetch failure into a message that says what went wrong and what to try. Never includes the token. */
export function explainFailure(
  err: unknown,
  ep: Pick<Endpoint, 'url' | 'key'>,
  what: string,
  timeoutMs = TIMEOUT_MS,
  as: 'token' | 'admin' = 'token',
): ClientError {
  const status = err instanceof FetchError ? err.status : undefined;
  const data: unknown = err instanceof FetchError ? err.data : undefined;
  const body = typeof data === 'object' && data !== null ? (data as { error?: unknown; instances?: unknown }) : {};
  // The daemon's own refusals are JSON `{ error }`; a plain-text 404 is a route this daemon does not have.
  if (status === 404 && typeof data !== 'string') {
    const listed = body.instances;
    const known = Array.isArray(listed) && listed.every((k) => typeof k === 'string') ? listed : undefined;
    return new UnknownInstanceError(ep.key, known, { cause: err });
  }
  const why = (): string => {
    if (status === undefined) {
      const codes = errorCodes(err);
      const name = err instanceof Error && err.cause instanceof Error ? err.cause.name : '';
      if (codes.includes('ECONNREFUSED'))
        return `no watchdog answering at ${ep.url} — is it running? (start it with: watchdog start)`;
      if (codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN'))
        return `cannot resolve the host in ${ep.url} (check --url or Urls in appsettings.yml)`;
      if (name === 'TimeoutError' || name === 'AbortError')
        return `the watchdog at ${ep.url} did not answer ${what} for ${ep.key} within ${timeoutMs / 1000} s`;
      return `could not reach the watchdog at ${ep.url}: ${rootCause(err) || (err instanceof Error ? err.message : String(err))}`;
    }
    if (status === 401 && body.error === 'instance has no ApiToken')
      return `401: instance ${ep.key} has no ApiToken on the watchdog at ${ep.url}, so it refuses control (set Servers.Instances.${ep.key}.ApiToken there)`;
    if (status === 401 && as === 'admin')
      return `401: the user name and password were refused by the watchdog at ${ep.url} (check --user and --password, or WATCHDOG_ADMIN; a login kept by watchdog login: log in again)`;
    if (status === 401)
      return `401: the token for instance ${ep.key} was refused (check --token, WATCHDOG_TOKEN or ApiToken)`;
    // 409: the daemon can tell at once that the action cannot be done now, and says why.
    if (status === 409 && typeof body.error === 'string')
      return `${what} refused for instance ${ep.key}: ${body.error}`;
    if (status === 404)
      return `404: the watchdog at ${ep.url} has no ${what} route (an older version? is --url right?)`;
    if (status === 403 && as === 'token')
      return `403: the watchdog at ${ep.url} refused the credentials for instance "${ep.key}"${bodyDetail(data)}`;
    return `${status}: the watchdog at ${ep.url} refused ${what} for instance ${ep.key}${bodyDetail(data)}`;
  };
  return new ClientError(why(), 1, { cause: err });
}

/** An instance key nobody configured; `known` lists the daemon's (or the local config's) instances when found. */
export class UnknownInstanceError extends ClientError {
  override name = 'UnknownInstanceError';
  constructor(
    readonly key: string,
    readonly known: readonly string[] | undefined,
    options?: ErrorOptions,
  ) {
    const list = known
      ? known.join(', ') || 'none'
      : "unknown here: Admin credentials or the daemon's appsettings.yml list them";
    super(`no instance "${key}" (instances: ${list})`, 1, options);
  }
}
