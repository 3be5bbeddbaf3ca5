/**
 * The schemas of the JSON bodies that are not an instance's own (those are src/supervisor/status.ts), and the named
 * table of the OpenAPI document's `components.schemas`: handlers type their bodies with them, so neither can drift.
 */
import * as v from 'valibot';
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
import { LoginKeySchema, NewUserSchema, UserChangedSchema, UserEntrySchema, UserRolesSchema } from './user-schemas.ts';

export const ErrorSchema = v.object({ error: v.string() });

/** The logs route's 404: the instances are listed only to an Admin or loopback client. */
export const UnknownInstanceSchema = v.object({ error: v.string(), instances: v.optional(v.array(v.string())) });

export const HealthSchema = v.object({
  status: v.pipe(
    v.picklist(['ok', 'degraded']),
    v.description('degraded: something needs a person (see problems); the answer is still 200, the daemon still works'),
  ),
  problems: v.optional(v.pipe(v.array(v.string()), v.description('what is degraded, in words (a disk low on space)'))),
  disk: v.optional(v.array(DiskReadingSchema)),
  version: v.string(),
  pid: v.number(),
  uptimeSeconds: v.number(),
  instances: v.pipe(v.record(v.string(), v.string()), v.description('each instance key with its state')),
});
export type Health = v.InferOutput<typeof HealthSchema>;

export const LogsSchema = v.object({ key: v.string(), found: v.boolean(), lines: v.array(v.string()) });
export type Logs = v.InferOutput<typeof LogsSchema>;

export const DashboardLogSchema = v.object({ key: v.string(), lines: v.array(v.string()) });
export type DashboardLog = v.InferOutput<typeof DashboardLogSchema>;

export const DashboardControlSchema = v.object({
  key: v.string(),
  action: v.picklist(CONTROL_VERBS),
  accepted: v.literal(true),
});
export type DashboardControl = v.InferOutput<typeof DashboardControlSchema>;

/** `GET /api/me`: who the dashboard's client is, and its permissions on each instance it may see. */
export const DashboardMeSchema = v.object({
  user: v.nullable(v.string()),
  kind: v.nullable(v.picklist(['user', 'key', 'instance-token', 'admin', 'sso'])),
  /** false while the users file holds no accounts: then every button is the daemon's to refuse, as before. */
  accounts: v.boolean(),
  /** Whether a login session let it in (the page then offers Log out). */
  session: v.boolean(),
  permissions: v.record(v.string(), v.array(v.string())),
});
export type DashboardMe = v.InferOutput<typeof DashboardMeSchema>;

export const ConsoleCommandSchema = v.object({
  command: v.pipe(
    v.string(),
    v.description('one console command line: printable, no newline or control character, at most 1023 bytes'),
  ),
});
export const ConsoleSentSchema = v.object({ sent: v.literal(true) });
export const FileListingSchema = v.object({
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
});
export type FileListing = v.InferOutput<typeof FileListingSchema>;

/** The named schemas of the document's `components.schemas`. */
export const SCHEMAS = {
  InstanceStatus: InstanceStatusSchema,
  LastExit: LastExitSchema,
  MaintenanceStatus: MaintenanceStatusSchema,
  AgonesStatus: AgonesStatusSchema,
  Error: ErrorSchema,
  UnknownInstance: UnknownInstanceSchema,
  Health: HealthSchema,
  Logs: LogsSchema,
  DashboardLog: DashboardLogSchema,
  DashboardControl: DashboardControlSchema,
  DashboardMe: DashboardMeSchema,
  Backup: BackupSchema,
  ConsoleCommand: ConsoleCommandSchema,
  ConsoleSent: ConsoleSentSchema,
  FileListing: FileListingSchema,
  UserEntry: UserEntrySchema,
  NewUser: NewUserSchema,
  UserRoles: UserRolesSchema,
  UserChanged: UserChangedSchema,
  LoginKey: LoginKeySchema,
} as const;
export type SchemaName = keyof typeof SCHEMAS;
