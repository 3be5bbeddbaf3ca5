import { describeError } from '../errors.ts';
import { type BackupEntry, entryOf } from './catalog.ts';
import type { BackupManifest } from './manifest.ts';

export interface ReplaceDataSteps {
  /** The instance's backups folder. */
  dir: string;
  /** Takes the `before-restore` snapshot of the data about to be replaced. */
  save(): Promise<BackupManifest>;
  /** Puts a snapshot's data in place of the current data. */
  restore(entry: BackupEntry): Promise<void>;
  /** Snapshots retention must leave alone: the one restored and the saved copy are in it while this runs. */
  restoring: Set<string>;
}

/**
 * Puts `entry` back in place of the current data, which is snapshotted first, then runs `then`. When `then` fails,
 * the data it replaced is put back from that snapshot, so a failed rollback leaves data and build as they were.
 */
export async function replaceWithSnapshot<T>(
  entry: BackupEntry,
  then: () => Promise<T>,
  steps: ReplaceDataSteps,
): Promise<{ saved: BackupManifest; result: T }> {
  const pinned = [entry.id];
  for (const id of pinned) steps.restoring.add(id);
  try {
    const saved = await steps.save();
    // The copy of what is replaced stays until this is over, whatever a snapshot taken meanwhile would expire.
    pinned.push(saved.id);
    steps.restoring.add(saved.id);
    await steps.restore(entry);
    try {
      return { saved, result: await then() };
    } catch (err) {
      await steps.restore(entryOf(steps.dir, saved)).catch((undo: unknown) => {
        throw new Error(
          `${describeError(err)}; putting the replaced data back from ${saved.id} failed too: ${describeError(undo)}`,
          { cause: undo },
        );
      });
      throw err;
    }
  } finally {
    for (const id of pinned) steps.restoring.delete(id);
  }
}
