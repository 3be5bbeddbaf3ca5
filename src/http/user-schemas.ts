/** The JSON bodies of the user routes (user-routes.ts), named in schemas.ts for the OpenAPI document. */
import * as v from 'valibot';
import { NAME } from '../auth/users-file.ts';

const Roles = v.pipe(
  v.array(v.pipe(v.string(), v.maxLength(200))),
  v.maxLength(100),
  v.description('role or role@instance, as in users.yml: a role without @instance holds on every instance'),
);

export const UserEntrySchema = v.object({
  name: v.string(),
  roles: v.array(v.string()),
  totp: v.pipe(v.boolean(), v.description('whether the user logs in with a one-time code too')),
  keys: v.pipe(v.number(), v.description('how many API keys the user has')),
});
export type UserEntry = v.InferOutput<typeof UserEntrySchema>;

export const NewUserSchema = v.object({
  name: v.pipe(v.string(), v.regex(NAME, 'expected a user name of letters, digits, "_", ".", "@" and "-", at most 64')),
  password: v.pipe(
    v.string(),
    v.minLength(8, 'expected a password of at least 8 characters'),
    v.maxLength(1024, 'expected a password of at most 1024 characters'),
  ),
  roles: Roles,
});

export const UserRolesSchema = v.object({ roles: Roles });

export const UserChangedSchema = v.object({
  name: v.string(),
  roles: v.optional(v.array(v.string())),
  removed: v.optional(v.literal(true)),
  revokedKeys: v.optional(v.pipe(v.number(), v.description('API keys of the removed user, revoked with it'))),
});
export type UserChanged = v.InferOutput<typeof UserChangedSchema>;

export const LoginKeySchema = v.object({
  id: v.pipe(v.string(), v.description('the id `watchdog key list` shows and `watchdog key revoke` takes')),
  key: v.pipe(v.string(), v.description('the key, shown this once: send it as Authorization: Bearer <key>')),
  user: v.string(),
  expires: v.pipe(v.string(), v.description('when it is refused (ISO 8601), 30 days on')),
});
export type LoginKey = v.InferOutput<typeof LoginKeySchema>;
