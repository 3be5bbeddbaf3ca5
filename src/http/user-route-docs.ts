/** What the user routes (user-routes.ts) say about themselves for the OpenAPI document. */
import { errors, type RouteDoc } from './route-doc.ts';

const NO_FILE =
  'the users file is broken or gone (fix it first), the user exists already, or the daemon has none to edit';
/** What every route here may answer besides its success (`body`: it takes a JSON body; `named`: a user's path). */
const refusals = (body: boolean, named: boolean): RouteDoc['responses'] => ({
  ...(body ? { 400: 'a body that is not the JSON asked for, or an unknown role' } : errors(400)),
  ...errors(401),
  403: 'the client lacks users.manage, or the grant rule refuses (README "Users and rights"); names the permission',
  ...(named ? { 404: 'no such user' } : {}),
  ...errors(405),
  409: NO_FILE,
  ...(body ? errors(413) : {}),
});

export const userRouteDocs: readonly RouteDoc[] = [
  {
    route: 'get /api/users',
    tag: 'dashboard',
    access: 'admin',
    summary: 'the users of the users file, with their roles (never a password hash); needs users.manage',
    responses: {
      200: { description: 'each user', json: 'UserEntry', list: true },
      ...refusals(false, false),
    },
  },
  {
    route: 'post /api/users',
    tag: 'dashboard',
    access: 'admin',
    summary: 'creates a user with a password and roles, granting only what the client holds (the grant rule)',
    body: 'NewUser',
    responses: {
      201: { description: 'created, and in force', json: 'UserChanged' },
      ...refusals(true, false),
    },
  },
  {
    route: 'put /api/users/{name}/roles',
    tag: 'dashboard',
    access: 'admin',
    summary: "replaces a user's roles; never the client's own, nor those of a user holding more than the client",
    body: 'UserRoles',
    responses: {
      200: { description: 'changed, and in force', json: 'UserChanged' },
      ...refusals(true, true),
    },
  },
  {
    route: 'delete /api/users/{name}',
    tag: 'dashboard',
    access: 'admin',
    summary: 'removes a user and revokes its API keys; never the client itself, nor a user holding more',
    responses: {
      200: { description: 'removed, and in force', json: 'UserChanged' },
      ...refusals(false, true),
    },
  },
  {
    route: 'post /api/me/keys',
    tag: 'dashboard',
    access: 'admin',
    summary:
      "an API key of the client's own, with the user's rights and 30 days to live, shown once (`watchdog login` keeps it)",
    responses: {
      201: { description: 'made, and in force', json: 'LoginKey' },
      ...errors(400, 401),
      403: 'the client is not a user of the users file logged in with its password',
      ...errors(405),
      409: NO_FILE,
    },
  },
];
