import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { Logger } from '../log.ts';
import type { Players } from './players.ts';
import type { Round } from './rounds.ts';

const HELP = 'commands: status, players, say <text>, help';

/**
 * The demo's console: one command per line on standard input, as the engine reads its console (the watchdog's
 * `Console: true` makes standard input a FIFO it writes to). Each answer is a log line, so it reaches the server log
 * that `watchdog console` prints back.
 */
export function startDemoConsole(opts: { input: Readable; log: Logger; players: Players; round: () => Round }): void {
  const { log, players } = opts;
  const answer = (line: string): string => {
    const [command = '', ...rest] = line.trim().split(/\s+/);
    switch (command) {
      case 'status': {
        const round = opts.round();
        const seconds = Math.round((Date.now() - round.startedAt.getTime()) / 1000);
        return `${players.count()} player(s), round ${round.id} (${seconds} s in)`;
      }
      case 'players': {
        const names = players.list().map((p) => p.name);
        return names.length === 0 ? 'nobody is on' : names.join(', ');
      }
      case 'say': {
        const text = rest.join(' ');
        if (text === '') return 'say what? (say <text>)';
        return `told ${players.broadcast(text)} player(s)`;
      }
      case 'help':
        return HELP;
      default:
        return `unknown command: ${command} (${HELP})`;
    }
  };
  const lines = createInterface({ input: opts.input, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (line) => {
    if (line.trim() !== '') log.info(`console> ${line.trim()}: ${answer(line)}`);
  });
  // Standard input ending (no console: /dev/null) is no reason to stop serving.
  lines.on('error', () => undefined);
}
