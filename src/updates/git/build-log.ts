import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { UpdateError } from '../../errors.ts';

/**
 * Runs `work` (the fetch and build of commit `head`) with the build log at `path` opened afresh for it, so the log
 * is always the last build's; a failure is written at its end and becomes an UpdateError.
 */
export async function withBuildLog<T>(
  log: { path: string; key: string; head: string },
  work: (sink: WriteStream) => Promise<T>,
): Promise<T> {
  await mkdir(dirname(log.path), { recursive: true });
  const sink = createWriteStream(log.path, { flags: 'w' });
  const opened = new Promise<void>((resolve, reject) => sink.once('open', () => resolve()).once('error', reject));
  try {
    await opened;
  } catch (err) {
    throw new UpdateError(`cannot write the build log ${log.path}`, { cause: err });
  }
  sink.write(`# build of ${log.head} for instance ${log.key} started ${new Date().toISOString()}\n`);
  try {
    const result = await work(sink);
    sink.write(`# staged ${log.head}\n`);
    return result;
  } catch (err) {
    sink.write(`# failed: ${err instanceof Error ? err.message : String(err)}\n`);
    throw err instanceof UpdateError ? err : new UpdateError(`the Git update of ${log.key} failed`, { cause: err });
  } finally {
    await new Promise<void>((resolve) => sink.end(resolve));
  }
}
