import type { StateValue } from 'xstate';
import { statusPath } from '../../machines/instance.ts';

/**
 * The status name of the machine's `server` region: `{ server: { stopped: 'idle' }, … }` → `stopped.idle`, named as
 * the status shows it (`{ owning: { live: 'running' } }` → `running`). The other regions have status fields of their
 * own (`checking`).
 */
export function statePath(value: StateValue): string {
  const server = typeof value === 'string' ? value : (value.server ?? value);
  return statusPath(machinePath(server as StateValue));
}

function machinePath(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value)[0] ?? ['', ''];
  if (inner === undefined || (typeof inner === 'object' && Object.keys(inner).length === 0)) return key;
  return `${key}.${machinePath(inner as StateValue)}`;
}
