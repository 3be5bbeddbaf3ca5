import type { StateValue } from 'xstate';

/**
 * The status name: the path in the machine's `lifecycle` region, as it is (`{ lifecycle: { stopped: 'idle' }, … }`
 * → `stopped.idle`, `server.running`). The other regions have status fields of their own (`checking`).
 */
export function statePath(value: StateValue): string {
  const lifecycle = typeof value === 'string' ? value : (value.lifecycle ?? value);
  return dotted(lifecycle as StateValue);
}

function dotted(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, inner] = Object.entries(value)[0] ?? ['', ''];
  if (inner === undefined || (typeof inner === 'object' && Object.keys(inner).length === 0)) return key;
  return `${key}.${dotted(inner as StateValue)}`;
}
