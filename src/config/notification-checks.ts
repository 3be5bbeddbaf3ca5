import { type ConfigPath, isMap } from './merge.ts';

/**
 * `Notification.Routes[].Instances` must name configured instances: a misspelt id would quietly send that route
 * nothing. Reads the raw settings defensively, as checks.ts does (a wrong type is the schema's problem).
 */
export function checkRouteInstances(
  raw: Record<string, unknown>,
  problem: (path: ConfigPath, expected: string, found: unknown) => void,
): void {
  const servers = raw.Servers;
  const known = Object.keys(isMap(servers) && isMap(servers.Instances) ? servers.Instances : {});
  const notification = raw.Notification;
  const routes = isMap(notification) ? notification.Routes : undefined;
  if (!Array.isArray(routes)) return;
  routes.forEach((route: unknown, i) => {
    const instances = isMap(route) ? route.Instances : undefined;
    if (!Array.isArray(instances)) return;
    instances.forEach((id: unknown, j) => {
      if (typeof id === 'string' && !known.includes(id))
        problem(
          ['Notification', 'Routes', i, 'Instances', j],
          `expected an instance id from Servers.Instances (${known.join(', ') || 'none configured'})`,
          id,
        );
    });
  });
}
