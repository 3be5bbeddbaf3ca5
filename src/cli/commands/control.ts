import type { Command } from '../main.ts';
// Placeholder until the control client lands; it says so instead of pretending.
export function control(action: string): Command {
  return async () => {
    process.stderr.write(`watchdog ${action}: not built yet\n`);
    return 1;
  };
}
