import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.ts';

/** One finished round as recorded in `<data-dir>/rounds.json`. */
export interface RoundRecord {
  id: number;
  startedAt: string;
  endedAt: string;
  players: number;
}

export interface Round {
  id: number;
  startedAt: Date;
}

const KEEP = 100;
const FILE = 'rounds.json';

async function readHistory(dataDir: string, log: Logger): Promise<RoundRecord[]> {
  try {
    const doc = JSON.parse(await readFile(join(dataDir, FILE), 'utf8')) as { rounds?: RoundRecord[] };
    return Array.isArray(doc.rounds) ? doc.rounds : [];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      log.warn(`cannot read ${FILE}; starting a new history`, { error: err });
    return [];
  }
}

/** Writes through a temporary file in the same folder, so a crash never leaves half a file. */
async function writeHistory(dataDir: string, rounds: RoundRecord[]): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const tmp = join(dataDir, `${FILE}.tmp`);
  await writeFile(tmp, JSON.stringify({ rounds }, null, 2) + '\n');
  await rename(tmp, join(dataDir, FILE));
}

/** Rounds of a fixed length back to back, ids going on from `<data-dir>/rounds.json`, which keeps the last 100. */
export async function startRounds(opts: {
  lengthSeconds: number;
  /** `--data-dir`; without it nothing is written. */
  dataDir: string | undefined;
  log: Logger;
  players: () => number;
  /** Called at each round end; return false to stop playing (the server is leaving). */
  onRoundEnd: (ended: RoundRecord) => boolean | Promise<boolean>;
}) {
  const { log, dataDir } = opts;
  const history = dataDir ? await readHistory(dataDir, log) : [];
  if (!dataDir) log.info('no --data-dir given: rounds are not recorded');
  let round: Round = { id: (history.at(-1)?.id ?? 0) + 1, startedAt: new Date() };
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let stopped = false;

  const begin = () => {
    log.info(`round ${round.id} started`, { lengthSeconds: opts.lengthSeconds, players: opts.players() });
    timer = setTimeout(() => void end(), opts.lengthSeconds * 1000);
  };

  const end = async () => {
    const record: RoundRecord = {
      id: round.id,
      startedAt: round.startedAt.toISOString(),
      endedAt: new Date().toISOString(),
      players: opts.players(),
    };
    log.info(`round ${round.id} ended`, { players: record.players });
    if (dataDir) {
      history.push(record);
      history.splice(0, Math.max(0, history.length - KEEP));
      writing = writing
        .then(() => writeHistory(dataDir, history))
        .catch((err: unknown) => log.warn(`cannot write ${FILE}`, { dataDir, error: err }));
      await writing;
    }
    if (stopped || !(await opts.onRoundEnd(record)) || stopped) return;
    round = { id: round.id + 1, startedAt: new Date() };
    begin();
  };

  begin();
  return {
    current: (): Round => round,
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await writing;
    },
  };
}
