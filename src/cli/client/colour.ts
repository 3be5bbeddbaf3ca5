/** ANSI styling for the CLI, applied only when a person is looking (a TTY) and has not opted out. */

type Style = 'green' | 'yellow' | 'red' | 'dim' | 'bold';

const CODES: Record<Style, [number, number]> = {
  green: [32, 39],
  yellow: [33, 39],
  red: [31, 39],
  dim: [2, 22],
  bold: [1, 22],
};

/**
 * Colours on when the stream is a TTY and `NO_COLOR` is unset. Following no-color.org, an empty
 * `NO_COLOR` counts as unset.
 */
export function colourEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

export function paint(text: string, style: Style | undefined, on: boolean): string {
  if (!on || !style) return text;
  const [open, close] = CODES[style];
  return `\x1b[${open}m${text}\x1b[${close}m`;
}

/** The colour of a dotted state path: green running, yellow in transition, red failing, dim idle. */
export function stateStyle(state: string): Style | undefined {
  if (state === 'server.running') return 'green';
  if (state === 'stopped.failing' || state.startsWith('stopped.failing.')) return 'red';
  if (state === 'stopped.idle' || state.startsWith('stopped.idle.')) return 'dim';
  const top = state.split('.')[0];
  if (top === 'server' || top === 'restarting' || top === 'updating' || top === 'rolling-back') return 'yellow';
  return undefined;
}

/** Removes ANSI styling, to measure what a reader sees. */
export function visibleLength(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI sequences this strips
  return text.replace(/\x1b\[[0-9;]*m/g, '').length;
}
