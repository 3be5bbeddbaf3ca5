import type { Permission } from '../auth/permissions.ts';

/**
 * THE table of the routes that take an instance's `ApiToken`, a user or a key, and the permission each needs.
 * Each route's middleware names its row (instance-auth.ts); the access tests walk every row.
 */
export const ROUTE_PERMISSIONS = {
  'POST /instances/:key/restart': 'control.restart',
  'POST /instances/:key/update': 'control.update',
  'POST /instances/:key/stop': 'control.stop',
  'POST /instances/:key/rollback': 'control.rollback',
  'POST /instances/:key/restore': 'backups.restore',
  'POST /instances/:key/hold': 'hold',
  'POST /instances/:key/release': 'hold',
  'GET /instances/:key/status': 'status.read',
  'GET /instances/:key/logs': 'logs.read',
  'POST /instances/:key/console': 'console.send',
  'GET /instances/:key/files/*': 'files.read',
  'GET /instances/:key/backups': 'backups.read',
  'POST /instances/:key/backups': 'backups.create',
} as const satisfies Record<string, Permission>;

export type InstanceRoute = keyof typeof ROUTE_PERMISSIONS;

/**
 * What one request on `row` needs: its row's permission, and `backups.restore` for a rollback that also puts the
 * data back (`withData`, unless false or 0): a right to roll builds back is no right to replace the data.
 */
export function permissionsOf(row: InstanceRoute, query: (name: string) => string | undefined): Permission[] {
  const withData = query('withData');
  const restores =
    row === 'POST /instances/:key/rollback' && withData !== undefined && !['false', '0'].includes(withData);
  return restores ? [ROUTE_PERMISSIONS[row], 'backups.restore'] : [ROUTE_PERMISSIONS[row]];
}
