import type { RetentionSettings } from '../config/sections/backups.ts';
import { expired, retentionRule } from '../store/retention.ts';
import type { OffHostCopies } from './after-command.ts';
import { type BackupEntry, removeBackup } from './catalog.ts';

/**
 * `Retention.Backups` for one instance, and the snapshots it must leave alone for now: those whose install has not
 * ended, those being restored, those being copied off-host, and those the caller still needs (`spared`).
 */
export class BackupRetention {
  /** Before-update snapshots whose install has not ended: retention neither counts nor removes them. */
  readonly installing = new Set<string>();
  /** Snapshots being restored, and the copies of what they replace: retention leaves them alone until it is over. */
  readonly restoring = new Set<string>();

  constructor(
    private readonly copies: OffHostCopies,
    private readonly spared?: () => Promise<string[]>,
  ) {}

  /** Removes what `retention` says of `entries`, except the snapshots held as above; returns their ids. */
  async apply(entries: BackupEntry[], retention: RetentionSettings, now: number): Promise<string[]> {
    const counted = entries.filter((b) => !this.installing.has(b.id));
    const items = counted.map((b) => ({ ...b, at: Date.parse(b.takenAt), bytes: b.archiveBytes }));
    const doomed = expired(items, retentionRule(retention.Backups), now);
    const removed: string[] = [];
    const spared = new Set(await (this.spared?.() ?? []));
    for (const entry of doomed) {
      if (this.copies.has(entry.id) || this.restoring.has(entry.id) || spared.has(entry.id)) continue;
      await removeBackup(entry);
      removed.push(entry.id);
    }
    return removed;
  }
}
