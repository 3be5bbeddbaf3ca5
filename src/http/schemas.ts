/** The JSON bodies, named as the OpenAPI document's `components.schemas`: handlers type theirs by them. */
import * as v from 'valibot';
import { NAME } from '../auth/users-file.ts';
import { DiskReadingSchema } from '../disk-reading.ts';
import {
  AgonesStatusSchema,
  BackupSchema,
  InstanceStatusSchema,
  Iso,
  LastExitSchema,
  MaintenanceStatusSchema,
} from '../supervisor/status.ts';
import { CONTROL_VERBS } from './control.ts';

const Roles = v.pipe(
  v.array(v.pipe(v.string(), v.maxLength(200))),
  v.maxLength(100),
  v.description('role or role@instance, as in users.yml: a role without @instance holds on every instance'),
);

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

export const SCHEMAS = {
  InstanceStatus: InstanceStatusSchema,
  LastExit: LastExitSchema,
  MaintenanceStatus: MaintenanceStatusSchema,
  AgonesStatus: AgonesStatusSchema,
  Error: v.object({ error: v.string() }),
  /** The logs route's 404: the instances are listed only to an Admin or loopback client. */
  UnknownInstance: v.object({ error: v.string(), instances: v.optional(v.array(v.string())) }),
  Health: v.object({
    status: v.pipe(
      v.picklist(['ok', 'degraded']),
      v.description(
        'degraded: something needs a person (see problems); the answer is still 200, the daemon still works',
      ),
    ),
    problems: v.optional(
      v.pipe(v.array(v.string()), v.description('what is degraded, in words (a disk low on space)')),
    ),
    disk: v.optional(v.array(DiskReadingSchema)),
    version: v.string(),
    pid: v.number(),
    uptimeSeconds: v.number(),
    starting: v.optional(
      v.pipe(v.literal(true), v.description('the daemon is still registering its instances: the map is not whole yet')),
    ),
    instances: v.pipe(v.record(v.string(), v.string()), v.description('each instance key with its state')),
  }),
  Logs: v.object({ key: v.string(), found: v.boolean(), lines: v.array(v.string()) }),
  DashboardLog: v.object({ key: v.string(), lines: v.array(v.string()) }),
  DashboardControl: v.object({ key: v.string(), action: v.picklist(CONTROL_VERBS), accepted: v.literal(true) }),
  /** `accounts`: false without, then every button is the daemon's to refuse; `session`: the page offers Log out. */
  DashboardMe: v.object({
    user: v.nullable(v.string()),
    kind: v.nullable(v.picklist(['user', 'key', 'instance-token', 'admin', 'sso'])),
    accounts: v.boolean(),
    session: v.boolean(),
    permissions: v.record(v.string(), v.array(v.string())),
  }),
  Backup: BackupSchema,
  ConsoleCommand: v.object({
    command: v.pipe(
      v.string(),
      v.description('one console command line: printable, no newline or control character, at most 1023 bytes'),
    ),
  }),
  ConsoleSent: v.object({ sent: v.literal(true) }),
  FileListing: v.object({
    path: v.pipe(v.string(), v.description("the folder under instances/<key>/; '' for the list of shared folders")),
    entries: v.array(
      v.object({
        name: v.string(),
        type: v.picklist(['file', 'folder']),
        size: v.pipe(v.number(), v.description('bytes; 0 for a folder')),
        modified: Iso,
      }),
    ),
    truncated: v.pipe(v.number(), v.description('entries left out past the first 5000')),
  }),
  UserEntry: v.object({
    name: v.string(),
    roles: v.array(v.string()),
    totp: v.pipe(v.boolean(), v.description('whether the user logs in with a one-time code too')),
    keys: v.pipe(v.number(), v.description('how many API keys the user has')),
  }),
  NewUser: NewUserSchema,
  UserRoles: UserRolesSchema,
  UserChanged: v.object({
    name: v.string(),
    roles: v.optional(v.array(v.string())),
    removed: v.optional(v.literal(true)),
    revokedKeys: v.optional(v.pipe(v.number(), v.description('API keys of the removed user, revoked with it'))),
  }),
  LoginKey: v.object({
    id: v.pipe(v.string(), v.description('the id `watchdog key list` shows and `watchdog key revoke` takes')),
    key: v.pipe(v.string(), v.description('the key, shown this once: send it as Authorization: Bearer <key>')),
    user: v.string(),
    expires: v.pipe(v.string(), v.description('when it is refused (ISO 8601), 30 days on')),
  }),
} as const;
export type SchemaName = keyof typeof SCHEMAS;
type Body<N extends SchemaName> = v.InferOutput<(typeof SCHEMAS)[N]>;
export type Health = Body<'Health'>;
export type Logs = Body<'Logs'>;
export type DashboardLog = Body<'DashboardLog'>;
export type DashboardControl = Body<'DashboardControl'>;
export type DashboardMe = Body<'DashboardMe'>;
export type FileListing = Body<'FileListing'>;
export type UserEntry = Body<'UserEntry'>;
export type UserChanged = Body<'UserChanged'>;
export type LoginKey = Body<'LoginKey'>;
