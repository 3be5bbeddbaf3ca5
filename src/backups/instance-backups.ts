import { join } from 'node:path';
import type { BackupsSettings, RetentionSettings } from '../config/sections/backups.ts';
import { describeError } from '../errors.ts';
import { OffHostCopies } from './after-command.ts';
import { BackupRetention } from './backup-retention.ts';
import { type BackupEntry, entryOf, listBackups, takenBefore } from './catalog.ts';
import { type InstallSnapshot, installSnapshot } from './install-snapshot.ts';
import type { BackupKind, BackupManifest } from './manifest.ts';
import { type BackupOutcome, type BackupReports, successOf } from './outcome.ts';
import { replaceWithSnapshot } from './replace-data.ts';
import { recoverInterrupted, restoreSnapshot } from './restore.ts';
import { BackupError, takeSnapshot } from './snapshot.ts';

const MB = 1_000_000;
/** The longest a `sqlite3 .backup` of one database may take before the snapshot fails. */
const SQLITE_TIMEOUT_MS = 10 * 60_000;

export interface InstanceBackupsOptions {
  key: string;
  instanceDir: string;
  settings: () => { backups: BackupsSettings; retention: RetentionSettings };
  reports: BackupReports;
  now?: () => number;
  /** Snapshots still needed later (a restore waiting for its moment, the one a rollback puts back): retention spares them. */
  spared?: () => Promise<string[]>;
}

/**
 * One instance's snapshots: taken one at a time (a scheduled one waits for one before an update), retention applied
 * after each, `Backups.AfterCommand` started after each and not awaited (an update does not wait for an upload);
 * a snapshot being copied off-host is not removed by retention until its copy ended.
 */
export class InstanceBackups {
  readonly dir: string;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #copies: OffHostCopies;
  readonly #retention: BackupRetention;
  /** A restore under way (`replaceData`), which `close` waits for. */
  #replacing: Promise<unknown> = Promise.resolve();
  #last: BackupOutcome | null = null;
  readonly #now: () => number;

  constructor(private readonly opts: InstanceBackupsOptions) {
    this.dir = join(opts.instanceDir, 'backups');
    this.#now = opts.now ?? Date.now;
    this.#copies = new OffHostCopies(opts.reports.afterCommand);
    this.#retention = new BackupRetention(this.#copies, opts.spared);
  }

  /**
   * At daemon start: puts back what a killed daemon left moved aside, clears its leftovers, and takes the newest
   * snapshot as the last one, so the status shows it before the next is taken. Returns what was put back.
   */
  async start(): Promise<string[]> {
    const back = await recoverInterrupted(this.opts.instanceDir, this.dir);
    const newest = (await this.list())[0];
    // Found, not taken: no log line or chat notice again, only what the status and `/metrics` show as the last.
    if (newest && this.#last === null) {
      const found = successOf(newest, [], Date.parse(newest.takenAt));
      this.#last = found;
      this.opts.reports.found(found);
    }
    return back;
  }

  get last(): BackupOutcome | null {
    return this.#last;
  }

  list(): Promise<BackupEntry[]> {
    return listBackups(this.dir, this.opts.reports.unreadable);
  }

  /** What a rollback from `revision` back to `previous` puts back (`takenBefore` in catalog.ts), or null. */
  async takenBefore(revision: string | null, previous: string | null): Promise<BackupEntry | null> {
    if (revision === null || previous === null) return null;
    return takenBefore(await this.list(), revision, previous);
  }

  /** Takes a snapshot; rejects with a BackupError (also reported) when it could not be taken. */
  take(req: {
    kind: BackupKind;
    revision: string | null;
    revisionAfter?: string | null;
    quiet: boolean | (() => boolean);
  }): Promise<BackupManifest> {
    return this.#serial(() => this.#take(req));
  }

  /** Runs `work` after everything queued before it (snapshots, restores, retention), one at a time. */
  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work);
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Takes the snapshot before an install (no server runs). It does not count against `Retention.Backups` until the
   * install succeeded, so a build that fails to install at every check cannot rotate older snapshots away.
   */
  async beforeInstall(req: { revision: string | null; revisionAfter: string | null }): Promise<InstallSnapshot> {
    let previous: BackupOutcome | null = null;
    const manifest = await this.#serial(() => {
      previous = this.#last;
      return this.#take({ kind: 'before-update', ...req, quiet: true }, true);
    });
    return installSnapshot(manifest, {
      dir: this.dir,
      settle: (work) =>
        this.#serial(() => {
          this.#retention.installing.delete(manifest.id);
          return work();
        }),
      applyRetention: () => this.#applyRetention(this.opts.settings().retention),
      removed: () => {
        // The status's last backup is not one that is gone.
        if (this.#last?.ok && this.#last.id === manifest.id) this.#last = previous;
      },
    });
  }

  /** The snapshot named `id`, or null. */
  async find(id: string): Promise<BackupEntry | null> {
    return (await this.list()).find((b) => b.id === id) ?? null;
  }

  /**
   * Puts `entry` back in place of the current data, which is snapshotted first (`before-restore`), then runs `then`
   * (a rollback swaps the build there). When `then` fails, the data it replaced is put back, so a failed rollback
   * leaves data and build as they were. No server may run. Resolves with the safety snapshot and `then`'s result.
   */
  replaceData<T>(
    entry: BackupEntry,
    revision: string | null,
    then: () => Promise<T>,
  ): Promise<{ saved: BackupManifest; result: T }> {
    const run = replaceWithSnapshot(entry, then, {
      dir: this.dir,
      save: () => this.take({ kind: 'before-restore', revision, quiet: true }),
      restore: (e) => this.#restore(e),
      restoring: this.#retention.restoring,
    });
    // The daemon's shutdown waits for it (close): a restore cut off between its renames would strand the data.
    this.#replacing = run.catch(() => {});
    return run;
  }

  /** Restores a snapshot; the caller has stopped the server and snapshotted the current data. Serialized with `take`. */
  #restore(entry: BackupEntry): Promise<void> {
    const { backups } = this.opts.settings();
    return this.#serial(() => restoreSnapshot(this.opts.instanceDir, entry, backups.SpaceMarginMegabytes * MB));
  }

  /** `installing`: a before-update snapshot, left out of retention until its install ended. */
  async #take(
    req: { kind: BackupKind; revision: string | null; revisionAfter?: string | null; quiet: boolean | (() => boolean) },
    installing = false,
  ) {
    const { backups, retention } = this.opts.settings();
    try {
      const manifest = await takeSnapshot({
        ...req,
        instance: this.opts.key,
        instanceDir: this.opts.instanceDir,
        backupsDir: this.dir,
        sqlite: { program: backups.Sqlite3Path, timeoutMs: SQLITE_TIMEOUT_MS },
        marginBytes: backups.SpaceMarginMegabytes * MB,
        now: new Date(this.#now()),
      });
      if (installing) this.#retention.installing.add(manifest.id);
      const removed = await this.#applyRetention(retention);
      this.#report(successOf(manifest, removed, this.#now()));
      if (backups.AfterCommand)
        this.#copies.start(backups.AfterCommand, entryOf(this.dir, manifest), {
          cwd: this.opts.instanceDir,
          timeoutMs: backups.AfterCommandTimeoutSeconds * 1000,
        });
      return manifest;
    } catch (err) {
      const e = err instanceof BackupError ? err : new BackupError('failed', describeError(err), { cause: err });
      this.#report({ ok: false, kind: req.kind, reason: e.reason, error: e.message, at: this.#now() });
      throw e;
    }
  }

  /** Removes what `Retention.Backups` says, except snapshots still being copied off-host or restored; their ids. */
  async #applyRetention(retention: RetentionSettings): Promise<string[]> {
    return this.#retention.apply(await this.list(), retention, this.#now());
  }

  /** Stops off-host copies still running; waits for a snapshot or a restore under way. */
  async close(): Promise<void> {
    this.#copies.stop();
    await this.#replacing;
    await this.#queue;
  }

  #report(outcome: BackupOutcome): void {
    this.#last = outcome;
    this.opts.reports.taken(outcome);
  }
}
