/**
 * What each route module says about its routes for the OpenAPI document, beside the routes; the app's 405 answers
 * come from it too. test/http/openapi.test.ts fails when the app serves a route that no table lists.
 */
import type { SchemaName } from './schemas.ts';

/** `instance`: the ApiToken (or a user); `launch`: the launch's secret; `admin`: the dashboard rule. */
export type Access = 'none' | 'instance' | 'launch' | 'admin' | 'instance-or-admin';

export type StatusCode = 200 | 201 | 206 | 303 | 400 | 401 | 403 | 404 | 405 | 409 | 413 | 416 | 429 | 500 | 503 | 507;

export interface ResponseDoc {
  description: string;
  /** A JSON body of this schema (`list`: an array of it). */
  json?: SchemaName;
  list?: boolean;
  /** A body that is not JSON: its media type. */
  media?: string;
}

export interface QueryDoc {
  name: string;
  description: string;
  type: 'integer' | 'string';
}

export interface RouteDoc {
  /** The method, and the full path as OpenAPI writes it (`{key}`, not `:key`): `get /instances/{key}/status`. */
  route: `${'get' | 'post' | 'put' | 'delete'} /${string}`;
  tag: 'control' | 'check-in' | 'logs' | 'binaries' | 'backups' | 'files' | 'info' | 'dashboard';
  summary: string;
  access: Access;
  query?: readonly QueryDoc[];
  /** A JSON request body of this schema. */
  body?: SchemaName;
  /** A request header the route needs (the dashboard's control header). */
  header?: string;
  /** A string says what the answer means: an error's (400 and up) has the `{"error": …}` body. */
  responses: Partial<Record<StatusCode, ResponseDoc | string>>;
}

/** The answers every route shares, as README.md "HTTP API" states them; a route lists the codes it can give. */
export const ERRORS = {
  400: 'malformed Authorization header (bad base64 or no colon), or a bad query',
  401: 'credentials missing, not Basic, or wrong (with WWW-Authenticate)',
  403: 'the user is not the instance key in the path, or the dashboard rule refuses',
  404: 'unknown instance',
  405: 'wrong method (with Allow)',
  409: 'refused at once, with the reason (no update provider, no previous build, rollback while updating, shutting down, …)',
  413: 'the request body is too large',
  416: 'the Range starts past the end of the file (with Content-Range: bytes */<size>)',
  429: 'too many requests from this caller; wait a little',
  500: 'the daemon failed to carry it out (the reason says why)',
  503: 'a configured instance the daemon is still starting (with Retry-After: 1)',
  507: 'not enough disk space for it, with the reason',
} as const satisfies Record<Exclude<StatusCode, 200 | 201 | 206 | 303>, string>;

export function methodPath({ route }: RouteDoc): { method: string; path: string } {
  const at = route.indexOf(' ');
  return { method: route.slice(0, at), path: route.slice(at + 1) };
}

export function errors(...codes: (keyof typeof ERRORS)[]): Partial<Record<StatusCode, string>> {
  return Object.fromEntries(codes.map((code) => [code, ERRORS[code]]));
}
