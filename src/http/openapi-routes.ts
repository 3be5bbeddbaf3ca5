import { toJsonSchema } from '@valibot/to-json-schema';
import { Hono } from 'hono';
import { apiRouteDocs } from './api-routes.ts';
import { backupRouteDocs } from './backup-routes.ts';
import { binariesRouteDocs } from './binaries-routes.ts';
import { consoleRouteDocs } from './console-routes.ts';
import { controlRouteDocs } from './control-routes.ts';
import { eventRouteDocs } from './dashboard/events.ts';
import { dashboardRouteDocs } from './dashboard/routes.ts';
import type { HttpDeps } from './deps.ts';
import { fileRouteDocs } from './file-routes.ts';
import { infoRouteDocs } from './info-routes.ts';
import { logRouteDocs } from './log-routes.ts';
import { loginRouteDocs } from './login-routes.ts';
import { oidcRouteDocs } from './oidc-routes.ts';
import { type Access, errors, methodPath, type ResponseDoc, type RouteDoc } from './route-doc.ts';
import { SCHEMAS, type SchemaName } from './schemas.ts';
import { userRouteDocs } from './user-route-docs.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Every route the app serves (test/http/openapi.test.ts keeps it whole). */
export const ROUTE_DOCS: readonly RouteDoc[] = [
  ...controlRouteDocs,
  ...backupRouteDocs,
  ...consoleRouteDocs,
  ...fileRouteDocs,
  ...logRouteDocs,
  ...loginRouteDocs,
  ...oidcRouteDocs,
  ...binariesRouteDocs,
  ...infoRouteDocs,
  {
    route: 'get /openapi.json',
    tag: 'info',
    access: 'none',
    summary: 'this document (OpenAPI 3.1)',
    responses: { 200: { description: 'the OpenAPI document', media: 'application/json' }, ...errors(405) },
  },
  ...dashboardRouteDocs,
  ...eventRouteDocs,
  ...apiRouteDocs,
  ...userRouteDocs,
];

const SECURITY: Record<Access, JsonObject[]> = {
  none: [],
  instance: [{ instanceToken: [] }],
  launch: [{ launchSecret: [] }],
  // `{}`: no credentials, which the dashboard rule admits from the loopback while no Admin is configured.
  admin: [{ admin: [] }, {}],
  'instance-or-admin': [{ instanceToken: [] }, { admin: [] }, {}],
};

const ref = (name: SchemaName): JsonObject => ({ $ref: `#/components/schemas/${name}` });

function response(code: number, doc: ResponseDoc | string): JsonObject {
  if (typeof doc === 'string')
    return code < 400 ? { description: doc } : response(code, { description: doc, json: 'Error' });
  if (doc.json !== undefined) {
    return {
      description: doc.description,
      content: { 'application/json': { schema: doc.list ? { type: 'array', items: ref(doc.json) } : ref(doc.json) } },
    };
  }
  return doc.media === undefined
    ? { description: doc.description }
    : { description: doc.description, content: { [doc.media]: {} } };
}

function operation(doc: RouteDoc): JsonObject {
  const { method, path } = methodPath(doc);
  const parameters: Json[] = [
    ...[...path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1] ?? '',
      in: 'path',
      required: true,
      schema: { type: 'string' },
    })),
    ...(doc.query ?? []).map((q) => ({
      name: q.name,
      in: 'query',
      required: false,
      description: q.description,
      schema: { type: q.type },
    })),
  ];
  if (doc.header !== undefined)
    parameters.push({
      name: doc.header,
      in: 'header',
      required: true,
      description: 'any value; sent by the dashboard',
      schema: { type: 'string' },
    });
  const responses: JsonObject = {};
  for (const [code, r] of Object.entries(doc.responses)) responses[code] = response(Number(code), r);
  return {
    tags: [doc.tag],
    summary: doc.summary,
    operationId: `${method}${path.replace(/[^A-Za-z0-9]+(\w?)/g, (_, c: string) => c.toUpperCase())}` || method,
    security: SECURITY[doc.access],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.body === undefined
      ? {}
      : { requestBody: { required: true, content: { 'application/json': { schema: ref(doc.body) } } } }),
    responses,
  };
}

/** A valibot schema as JSON Schema 2020-12, OpenAPI 3.1's dialect, without its own `$schema`. */
function jsonSchema(name: SchemaName): JsonObject {
  const { $schema: _dialect, ...schema } = toJsonSchema(SCHEMAS[name], { target: 'draft-2020-12' }) as JsonObject;
  return schema;
}

/** The OpenAPI 3.1 document of the whole HTTP API, built from the route tables and their valibot schemas. */
export function openApiDocument(version: string): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const doc of ROUTE_DOCS) {
    const { method, path } = methodPath(doc);
    paths[path] = { ...paths[path], [method]: operation(doc) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'game-server-watchdog',
      version,
      description:
        'The watchdog daemon\'s HTTP API (README.md, "HTTP API"). Basic auth is checked in this order: missing or ' +
        'non-Basic header → 401; bad base64 or no colon → 400; user ≠ key → 403; unknown instance → 404 (503 while a ' +
        'configured one is starting); wrong password → 401.',
    },
    tags: [
      { name: 'control', description: 'control and status, Basic <key>:<ApiToken>' },
      { name: 'check-in', description: "the game server's check-in" },
      { name: 'logs', description: 'server logs' },
      { name: 'binaries', description: "the instance's build files" },
      { name: 'backups', description: "snapshots of the instance's data and config.toml" },
      { name: 'files', description: 'read-only listing and download of the folders in Files.Folders' },
      { name: 'info', description: 'health, padlock, metrics, this document' },
      {
        name: 'dashboard',
        description: 'the dashboard and its API (Admin Basic, or the loopback while no Admin is configured)',
      },
    ],
    paths,
    components: {
      securitySchemes: {
        instanceToken: {
          type: 'http',
          scheme: 'basic',
          description:
            "user: the instance key; password: its ApiToken. These routes also take a user's name and password " +
            '(users.yml), or `Authorization: Bearer <key>` of an API key, holding the permission the route needs ' +
            '(403 with `permission` when not; README "Users and rights")',
        },
        launchSecret: {
          type: 'http',
          scheme: 'basic',
          description: "user: the instance key; password: the secret of the server's current launch",
        },
        admin: {
          type: 'http',
          scheme: 'basic',
          description:
            "the daemon's Admin.Username and Admin.Password; while no Admin is configured, none from the loopback",
        },
      },
      schemas: Object.fromEntries((Object.keys(SCHEMAS) as SchemaName[]).map((name) => [name, jsonSchema(name)])),
    },
  };
}

/** `GET /openapi.json`, no auth: the document, built once. */
export function openapiRoutes({ version }: HttpDeps): Hono {
  const app = new Hono();
  let body: string | undefined;
  app.get('/openapi.json', (c) => {
    body ??= JSON.stringify(openApiDocument(version));
    return c.body(body, 200, {
      'Content-Type': 'application/json; charset=utf-8',
    });
  });
  return app;
}
