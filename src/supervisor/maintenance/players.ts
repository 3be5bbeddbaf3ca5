/** The `readPlayers` actor of `When: Empty`: the server's player count from its public `GET /status`. */
import { fromPromise } from 'xstate';
import type { PlayersInput } from '../../../machines/instance.types.ts';
import { readPlayers } from '../../process/server-api.ts';

/** Answers from a server's API are given this long: a busy game loop may take a moment. */
const REQUEST_MS = 5000;

/** `apiPort` and `pollMs` are read at each poll, so a config reload applies to the next one. */
export function createPlayersActor(host: { apiPort(): number; pollMs(): number }) {
  // A poll is never longer than the interval between polls.
  return fromPromise<number | null, PlayersInput>(() =>
    readPlayers(host.apiPort(), Math.min(REQUEST_MS, host.pollMs())),
  );
}
