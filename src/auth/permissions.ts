/** The rights a principal may hold, per instance or on all of them (`*`). The names are part of the interface. */
export const PERMISSIONS = [
  'status.read',
  'logs.read',
  'control.restart',
  'control.update',
  'control.stop',
  'control.rollback',
  'hold',
  'console.send',
  'files.read',
  'backups.read',
  'backups.create',
  'backups.restore',
  'users.manage',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

const NAMES: ReadonlySet<string> = new Set(PERMISSIONS);

export const isPermission = (name: string): name is Permission => NAMES.has(name);

const VIEWER: readonly Permission[] = ['status.read', 'logs.read'];
const MODERATOR: readonly Permission[] = [...VIEWER, 'control.restart', 'console.send', 'hold'];
const OPERATOR: readonly Permission[] = [
  ...MODERATOR,
  'control.update',
  'control.stop',
  'control.rollback',
  'files.read',
  'backups.read',
  'backups.create',
];

/** The built-in roles; a users file may add its own (`Roles:`) but not redefine these. */
export const BUILTIN_ROLES: Readonly<Record<string, readonly Permission[]>> = {
  viewer: VIEWER,
  moderator: MODERATOR,
  operator: OPERATOR,
  admin: PERMISSIONS,
};

/** Every instance: a grant without `@<instance>`. */
export const ALL_INSTANCES = '*';

/** One right: a permission on one instance, or on all of them. */
export interface Grant {
  permission: Permission;
  instance: string;
}

/** `name` or `name@instance` → the name and the instance (`*` when none is given). */
export function splitScoped(text: string): { name: string; instance: string } {
  const at = text.indexOf('@');
  if (at < 0) return { name: text, instance: ALL_INSTANCES };
  return { name: text.slice(0, at), instance: text.slice(at + 1) };
}

/** Whether `grants` give `permission` on `instance`: an exact grant there, or one on all instances. */
export function grants(list: readonly Grant[], permission: Permission, instance: string): boolean {
  return list.some((g) => g.permission === permission && (g.instance === ALL_INSTANCES || g.instance === instance));
}
