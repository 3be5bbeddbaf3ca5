import { join } from 'node:path';
import type { BackupsSettings, RetentionSettings } from '../config/sections/backups.ts';
import { describeError } from '../errors.ts';
import { lastLines, runChild } from '../process/run-child.ts';
import { expired, retentionRule } from '../store/retention.ts';
import { type BackupEntry, entryOf, listBackups, removeBackup, rewriteManifest } from './catalog.ts';
import type { BackupKind, BackupManifest } from './manifest.ts';
import { recoverInterrupted, restoreSnapshot } from './restore.ts';
import { BackupError, type SnapshotRequest, takeSnapshot } from './snapshot.ts';

export type BackupOutcome =
  | { ok: true; kind: BackupKind; id: string; bytes: number; archiveBytes: number; removed: string[]; at: number }
  | { ok: false; kind: BackupKind; reason: 'space' | 'failed'; error: string; at: number };

type BackupSuccess = Extract<BackupOutcome, { ok: true }>;

function successOf(manifest: BackupManifest, removed: string[], at: number): BackupSuccess {
  const { kind, id, bytes, archiveBytes } = manifest;
  return { ok: true, kind, id, bytes, archiveBytes, removed, at };
}

/** `status`: `exit code 3`, `killed by SIGKILL`, `could not start …`; `output`: the last lines of both streams. */
export interface AfterCommandResult {
  ok: boolean;
  status: string;
  output: string;
}

/**
 * The off-host copies (rclone, restic, …) under way, not awaited; retention spares a snapshot that `has` one. Each
 * runs with no shell, in the instance folder and its own process group, bounded, the snapshot in its environment; a
 * failure is its result.
 */
function createOffHostCopies(cwd: string, ended: (id: string, result: AfterCommandResult) => void) {
  const running = new Set<string>();
  const stopping = new AbortController();
  const run = async (command: readonly string[], snapshot: BackupEntry, timeoutMs: number) => {
    const [program, ...args] = command;
    if (program === undefined) return { ok: false, status: 'no program configured', output: '' };
    const env = {
      // Not the control token, the Admin login or any configuration variable (`Servers__…__ApiToken`).
      ...Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.includes('__') && !/^WATCHDOG_(TOKEN|ADMIN)$/.test(name)),
      ),
      WATCHDOG_BACKUP_PATH: snapshot.archive,
      WATCHDOG_BACKUP_MANIFEST: snapshot.archive.replace(/\.tar\.gz$/, '.json'),
      WATCHDOG_BACKUP_ID: snapshot.id,
      WATCHDOG_INSTANCE: snapshot.instance,
    };
    try {
      const what = 'Backups.AfterCommand';
      const r = await runChild(program, args, { cwd, env, signal: stopping.signal, timeoutMs, what });
      const status = r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`;
      return { ok: r.code === 0, status, output: lastLines(r.tail, 10) };
    } catch (err) {
      return { ok: false, status: describeError(err), output: '' };
    }
  };
  return {
    has: (id: string) => running.has(id),
    start(command: readonly string[], snapshot: BackupEntry, timeoutMs: number): void {
      running.add(snapshot.id);
      void run(command, snapshot, timeoutMs)
        .then((result) => ended(snapshot.id, result))
        .finally(() => running.delete(snapshot.id));
    },
    stop: () => stopping.abort(new Error('the daemon is stopping')),
  };
}

const MB = 1_000_000;
const SQLITE_TIMEOUT_MS = 10 * 60_000;

type Asked = Pick<SnapshotRequest, 'kind' | 'revision' | 'revisionAfter' | 'quiet'>;

/**
 * One instance's snapshots, taken one at a time, each followed by retention and by `Backups.AfterCommand`, not
 * awaited (an update does not wait for an upload); retention spares a snapshot until its copy ended.
 */
export function createInstanceBackups(opts: {
  key: string;
  instanceDir: string;
  settings: () => { backups: BackupsSettings; retention: RetentionSettings };
  reports: {
    taken(outcome: BackupOutcome): void;
    /** At daemon start, the newest snapshot on disk: the last one until the next is taken. */
    found(outcome: BackupSuccess): void;
    afterCommand(id: string, result: AfterCommandResult): void;
    /** A manifest that could not be read (and is left alone). */
    unreadable(file: string, err: Error): void;
  };
  now?: () => number;
  /** Snapshots still needed later (a restore waiting, the one a rollback puts back), which retention spares. */
  spared?: () => Promise<string[]>;
}) {
  const dir = join(opts.instanceDir, 'backups');
  const now = opts.now ?? Date.now;
  const copies = createOffHostCopies(opts.instanceDir, opts.reports.afterCommand);
  /** Retention neither counts nor removes before-update snapshots whose install has not ended. */
  const installing = new Set<string>();
  /** Nor snapshots being restored, and the copies of what they replace. */
  const restoring = new Set<string>();
  let queue: Promise<unknown> = Promise.resolve();
  /** A restore under way, which `close` waits for. */
  let replacing: Promise<unknown> = Promise.resolve();
  let last: BackupOutcome | null = null;

  const list = () => listBackups(dir, opts.reports.unreadable);

  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work);
    queue = run.catch(() => {});
    return run;
  };

  /** Removes what `Retention.Backups` says but for the snapshots held; returns their ids. */
  const applyRetention = async (retention: RetentionSettings): Promise<string[]> => {
    const counted = (await list()).filter((b) => !installing.has(b.id));
    const items = counted.map((b) => ({ ...b, at: Date.parse(b.takenAt), bytes: b.archiveBytes }));
    const doomed = expired(items, retentionRule(retention.Backups), now());
    const removed: string[] = [];
    const spared = new Set(await (opts.spared?.() ?? []));
    for (const entry of doomed) {
      if (copies.has(entry.id) || restoring.has(entry.id) || spared.has(entry.id)) continue;
      await removeBackup(entry);
      removed.push(entry.id);
    }
    return removed;
  };

  const report = (outcome: BackupOutcome) => {
    last = outcome;
    opts.reports.taken(outcome);
  };

  const snapshot = async (req: Asked, beforeInstall = false): Promise<BackupManifest> => {
    const { backups, retention } = opts.settings();
    try {
      const manifest = await takeSnapshot({
        ...req,
        instance: opts.key,
        instanceDir: opts.instanceDir,
        backupsDir: dir,
        sqlite: { program: backups.Sqlite3Path, timeoutMs: SQLITE_TIMEOUT_MS },
        marginBytes: backups.SpaceMarginMegabytes * MB,
        now: new Date(now()),
      });
      if (beforeInstall) installing.add(manifest.id);
      const removed = await applyRetention(retention);
      report(successOf(manifest, removed, now()));
      if (backups.AfterCommand)
        copies.start(backups.AfterCommand, entryOf(dir, manifest), backups.AfterCommandTimeoutSeconds * 1000);
      return manifest;
    } catch (err) {
      const e = err instanceof BackupError ? err : new BackupError('failed', describeError(err), { cause: err });
      report({ ok: false, kind: req.kind, reason: e.reason, error: e.message, at: now() });
      throw e;
    }
  };

  const restore = (entry: BackupEntry): Promise<void> =>
    serial(() => restoreSnapshot(opts.instanceDir, entry, opts.settings().backups.SpaceMarginMegabytes * MB));

  /** Rejects with a BackupError (also reported). */
  const take = (req: Asked): Promise<BackupManifest> => serial(() => snapshot(req));

  /**
   * Puts `entry` in place of the current data, snapshotted first, then runs `then` (a rollback's swap); when `then`
   * fails the data is put back, so data and build stay as they were. No server may run.
   */
  const replace = async <T>(entry: BackupEntry, revision: string | null, then: () => Promise<T>) => {
    const pinned = [entry.id];
    restoring.add(entry.id);
    try {
      const saved = await take({ kind: 'before-restore', revision, quiet: true });
      pinned.push(saved.id);
      restoring.add(saved.id);
      await restore(entry);
      try {
        return { saved, result: await then() };
      } catch (err) {
        await restore(entryOf(dir, saved)).catch((undo: unknown) => {
          throw new Error(
            `${describeError(err)}; putting the replaced data back from ${saved.id} failed too: ${describeError(undo)}`,
            { cause: undo },
          );
        });
        throw err;
      }
    } finally {
      for (const id of pinned) restoring.delete(id);
    }
  };

  return {
    dir,
    get last(): BackupOutcome | null {
      return last;
    },
    list,
    take,

    /** At daemon start: recovers what a killed daemon left, and takes the newest snapshot as the last; returns what was put back. */
    async start(): Promise<string[]> {
      const back = await recoverInterrupted(opts.instanceDir, dir);
      const newest = (await list())[0];
      if (newest && last === null) {
        const found = successOf(newest, [], Date.parse(newest.takenAt));
        last = found;
        opts.reports.found(found);
      }
      return back;
    },

    /** The newest `before-update` snapshot taken on `previous` just before `revision` (both: bin.prev may be newer). */
    async takenBefore(revision: string | null, previous: string | null): Promise<BackupEntry | null> {
      if (revision === null || previous === null) return null;
      const before = (b: BackupEntry) =>
        b.kind === 'before-update' && b.revisionAfter === revision && b.revision === previous;
      return (await list()).find(before) ?? null;
    },

    async find(id: string): Promise<BackupEntry | null> {
      return (await list()).find((b) => b.id === id) ?? null;
    },

    /** Not counted by retention until the install succeeded: a build failing at every check cannot rotate snapshots away. */
    async beforeInstall(req: { revision: string | null; revisionAfter: string | null }) {
      let previous: BackupOutcome | null = null;
      const manifest = await serial(() => {
        previous = last;
        return snapshot({ kind: 'before-update', ...req, quiet: true }, true);
      });
      const settle = <T>(work: () => Promise<T>) =>
        serial(() => {
          installing.delete(manifest.id);
          return work();
        });
      return {
        id: manifest.id,
        /** The manifest names `revision` (maybe newer than the check found) and retention counts it, and runs. */
        installed: (revision: string): Promise<string[]> =>
          settle(async () => {
            if (revision !== manifest.revisionAfter)
              await rewriteManifest(dir, { ...manifest, revisionAfter: revision });
            return applyRetention(opts.settings().retention);
          }),
        /** Removes the snapshot: its data is still in place under the old build, so no rollback will ask for it. */
        notInstalled: (): Promise<void> =>
          settle(async () => {
            await removeBackup(entryOf(dir, manifest));
            if (last?.ok && last.id === manifest.id) last = previous;
          }),
      };
    },

    /** `replace` above, which the daemon's shutdown waits for: one cut off between its renames would strand the data. */
    replaceData<T>(entry: BackupEntry, revision: string | null, then: () => Promise<T>) {
      const run = replace(entry, revision, then);
      replacing = run.catch(() => {});
      return run;
    },

    async close(): Promise<void> {
      copies.stop();
      await replacing;
      await queue;
    },
  };
}
export type InstanceBackups = ReturnType<typeof createInstanceBackups>;
