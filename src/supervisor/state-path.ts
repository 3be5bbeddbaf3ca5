import type { StateValue } from 'xstate';

/** `{ stopped: 'idle' }` → `stopped.idle`; `'running'` → `running`. Parallel states never occur in the instance chart. */
export function statePath(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value)[0] ?? ['', ''];
  if (inner === undefined || (typeof inner === 'object' && Object.keys(inner).length === 0)) return key;
  return `${key}.${statePath(inner as StateValue)}`;
}
