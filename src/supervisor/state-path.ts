import type { StateValue } from 'xstate';
import { statusPath } from '../../machines/instance.ts';

/**
 * `{ stopped: 'idle' }` → `stopped.idle`; `'running'` → `running`; named as the status shows it
 * (`{ owning: { live: 'running' } }` → `running`). Parallel states never occur in the instance chart.
 */
export function statePath(value: StateValue): string {
  return statusPath(machinePath(value));
}

function machinePath(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value)[0] ?? ['', ''];
  if (inner === undefined || (typeof inner === 'object' && Object.keys(inner).length === 0)) return key;
  return `${key}.${machinePath(inner as StateValue)}`;
}
