import type { Context } from 'hono';
import { Hono } from 'hono';
import * as v from 'valibot';
import { mayManage, type UserChange } from '../auth/may-manage.ts';
import { hashPassword } from '../auth/password.ts';
import { addApiKey, checkedText, writeUsers } from '../auth/users-edit.ts';
import {
  EMPTY_USERS,
  hasAccounts,
  parseUsers,
  readUsersFile,
  type UsersDb,
  type UsersDoc,
} from '../auth/users-file.ts';
import type { BusEvents } from '../bus.ts';
import { ConfigError } from '../errors.ts';
import { type AdminEnv, adminAccess } from './admin-auth.ts';
import { type Answer, reply } from './control.ts';
import type { HttpDeps } from './deps.ts';
import { limitBody, remoteAddress } from './request-info.ts';
import { refuseAdmin } from './rights.ts';
import { type LoginKey, NewUserSchema, type UserChanged, type UserEntry, UserRolesSchema } from './schemas.ts';

/** A change made to the file as read: its answer, and its audit line, told once the file is written. */
type Applied = { status: 200 | 201; body: UserChanged | LoginKey; audit: () => void };

/** How long a key made at `watchdog login` holds: a login is given again within a month. */
const LOGIN_KEY_DAYS = 30;

/** The users file as it stands, parsed (for the grant rule) and as written (to edit). */
type Current = { db: UsersDb; doc: UsersDoc };

/** The rights `roles` would give user `name` once written into `doc`; a ConfigError naming an unknown role. */
function grantsAfter(file: string, doc: UsersDoc, name: string) {
  const parsed = parseUsers(checkedText(file, doc), file);
  if (!parsed.ok) throw new ConfigError(parsed.problems);
  return parsed.db.users.get(name)?.grants ?? [];
}

/** A stand-in hash of nothing, cheap, so the roles are checked before the real password is hashed. */
const standIn = () => hashPassword('', { N: 1024, r: 1, p: 1 });

/**
 * Managing users over HTTP. Each edit asks the grant rule with the users file as it stands, writes through the same
 * code as `watchdog user`, and has the daemon read the file again before answering. Edits run one at a time, so two
 * requests never write over each other.
 */
export function userRoutes(deps: HttpDeps): Hono<AdminEnv> {
  const app = new Hono<AdminEnv>();
  const access = adminAccess(deps);
  const limit = limitBody(16_384);
  let queue = Promise.resolve();

  /** In turn with the other edits: `step` answers at once, or says what to write and audit. */
  const edit = (c: Context<AdminEnv>, step: (cur: Current) => Promise<Applied | Response>): Promise<Response> => {
    const task = queue.then(async (): Promise<Response> => {
      const file = deps.usersFile;
      if (file === undefined) return c.json({ error: 'this daemon has no users file to edit' }, 409);
      const read = await readUsersFile(file);
      if (!read.ok) return c.json({ error: [...read.problems, `fix ${file} first`].join('; ') }, 409);
      // The daemon keeps a removed file's accounts in force; a write now would replace them all with one user.
      if (read.missing && hasAccounts(deps.users?.() ?? EMPTY_USERS))
        return c.json({ error: `the users file ${file} is gone; put it back first` }, 409);
      const cur: Current = { db: read.db, doc: structuredClone(read.doc) };
      try {
        const done = await step(cur);
        if (done instanceof Response) return done;
        await writeUsers(file, cur.doc);
        done.audit();
        await deps.reloadUsers?.();
        return c.json(done.body, done.status);
      } catch (err) {
        if (err instanceof ConfigError) return c.json({ error: err.problems.join('; ') }, 400);
        throw err;
      }
    });
    queue = task.then(
      () => undefined,
      () => undefined,
    );
    return task;
  };

  /**
   * A user manager's edit: users.manage somewhere first (so no one else learns which users exist), then `change`
   * says what is asked, the grant rule decides, and `apply` makes the change (none: the list).
   */
  const run = (
    c: Context<AdminEnv>,
    change: (cur: Current) => Promise<UserChange | Answer>,
    apply?: (cur: Current) => Promise<Applied>,
  ): Promise<Response> =>
    edit(c, async (cur) => {
      const instances = deps.registry.list().map((i) => i.key);
      const gate = mayManage(c.var.principal, { action: 'list' }, cur.db, instances);
      if (gate) return refuseAdmin(c, deps.bus, gate.error, { permission: gate.permission });
      const asked = await change(cur);
      if ('status' in asked) return reply(c, asked);
      const refusal = mayManage(c.var.principal, asked, cur.db, instances);
      if (refusal) return refuseAdmin(c, deps.bus, refusal.error, { permission: refusal.permission });
      return apply ? apply(cur) : reply(c, { status: 200, body: listOf(cur.doc) });
    });

  const told = (
    c: Context<AdminEnv>,
    action: BusEvents['daemon:user-changed']['action'],
    name: string,
    more: { roles?: string[]; keyId?: string } = {},
  ) =>
    deps.bus.emit('daemon:user-changed', {
      action,
      by: c.var.adminUser,
      name,
      ...more,
      remote: remoteAddress(c),
      at: Date.now(),
    });

  app.get('/api/users', access, (c) => run(c, async () => ({ action: 'list' })));

  app.post('/api/users', access, limit, async (c) => {
    const body = v.safeParse(NewUserSchema, await c.req.json().catch(() => undefined));
    if (!body.success) return c.json({ error: bodyProblem(body.issues, '{"name", "password", "roles"}') }, 400);
    const { name, password, roles } = body.output;
    return run(
      c,
      async ({ doc }) => {
        doc.Users ??= {};
        if (doc.Users[name]) return { status: 409, error: `${name} exists already` };
        doc.Users[name] = { Password: await standIn(), Roles: roles };
        return { action: 'create', user: name, grants: grantsAfter(deps.usersFile ?? '', doc, name) };
      },
      async ({ doc }) => {
        const entry = doc.Users?.[name];
        if (entry) entry.Password = await hashPassword(password);
        return { status: 201, body: { name, roles }, audit: () => told(c, 'user.create', name, { roles }) };
      },
    );
  });

  app.put('/api/users/:name/roles', access, limit, async (c) => {
    const name = c.req.param('name');
    const body = v.safeParse(UserRolesSchema, await c.req.json().catch(() => undefined));
    if (!body.success) return c.json({ error: bodyProblem(body.issues, '{"roles": […]}') }, 400);
    const { roles } = body.output;
    return run(
      c,
      async ({ doc }) => {
        const entry = doc.Users?.[name];
        if (!entry) return { status: 404, error: `no user ${name}` };
        entry.Roles = roles;
        return { action: 'set-roles', user: name, grants: grantsAfter(deps.usersFile ?? '', doc, name) };
      },
      async () => ({ status: 200, body: { name, roles }, audit: () => told(c, 'user.roles', name, { roles }) }),
    );
  });

  app.delete('/api/users/:name', access, (c) => {
    const name = c.req.param('name');
    return run(
      c,
      async ({ doc }) =>
        doc.Users?.[name] ? { action: 'remove', user: name } : { status: 404, error: `no user ${name}` },
      async ({ doc }) => {
        delete doc.Users?.[name];
        const revoked = Object.entries(doc.Keys ?? {}).filter(([, k]) => k.User === name);
        for (const [id] of revoked) delete doc.Keys?.[id];
        const body: UserChanged = { name, removed: true, revokedKeys: revoked.length };
        return { status: 200, body, audit: () => told(c, 'user.remove', name) };
      },
    );
  });

  // `watchdog login`: a key of the client's own, so the CLI keeps no password. Only for a user of the users file
  // who proved itself (its password; with TOTP, its code at /login first): not for the Admin login, a proxy's word,
  // or a key, whose new key would outlive them. It holds what the user holds, asked of can() at each request.
  app.post('/api/me/keys', access, async (c) => {
    const p = c.var.principal;
    if (p?.kind !== 'user') {
      const who =
        p === undefined
          ? 'this watchdog has no accounts (users.yml), so there is no user'
          : `${c.var.adminUser} is no user`;
      const error = `${who} of the users file logged in with its password, the only one given a key here (\`watchdog key create\` makes one on the daemon's host)`;
      return refuseAdmin(c, deps.bus, error);
    }
    const name = p.user.name;
    return edit(c, async ({ doc }) => {
      if (!doc.Users?.[name]) return c.json({ error: `no user ${name} in the users file` }, 409);
      // The user's expired keys go, so that logging in again and again does not grow the file.
      const now = Date.now();
      for (const [id, k] of Object.entries(doc.Keys ?? {}))
        if (k.User === name && k.Expires !== undefined && Date.parse(k.Expires) <= now) delete doc.Keys?.[id];
      const made = addApiKey(doc, name, { days: LOGIN_KEY_DAYS }, now);
      const body: LoginKey = { id: made.id, key: made.key, user: name, expires: made.expires ?? '' };
      return { status: 201, body, audit: () => told(c, 'key.create', name, { keyId: made.id }) };
    });
  });
  return app;
}

/** Never a hash. */
function listOf(doc: UsersDoc): UserEntry[] {
  const keys = Object.values(doc.Keys ?? {});
  return Object.entries(doc.Users ?? {}).map(([name, u]) => ({
    name,
    roles: u.Roles ?? [],
    totp: u.Totp !== undefined,
    keys: keys.filter((k) => k.User === name).length,
  }));
}

/** The first problem of a body valibot refused, with the shape expected. */
function bodyProblem(issues: readonly v.BaseIssue<unknown>[], shape: string): string {
  const first = issues[0];
  const where = first?.path?.map((p) => String(p.key)).join('.') ?? '';
  return `expected a JSON body ${shape}${first ? `: ${where ? `${where}: ` : ''}${first.message}` : ''}`;
}
