import type { BackupEntry } from '../backups/catalog.ts';
import { type BackupOutcome, createInstanceBackups } from '../backups/instance-backups.ts';
import type { BackupManifest } from '../backups/manifest.ts';
import { describeError } from '../errors.ts';
import type { InstanceBackupsControl } from './contract.ts';
import { type CronTimer, cronTimer } from './cron-timer.ts';
import type { InstanceDeps } from './instance-deps.ts';
import type { BackupListing, BackupStatus, RestoreStatus } from './status.ts';
import type { AfterInstall } from './update-actors.ts';

/** An outcome's fields the bus event and the status share. */
const outcomeOf = (o: BackupOutcome) => ({
  ok: o.ok,
  kind: o.kind,
  id: o.ok ? o.id : null,
  archiveBytes: o.ok ? o.archiveBytes : null,
  error: o.ok ? null : o.error,
});

const listing = (m: BackupManifest): BackupListing => {
  const { id, kind, takenAt, revision, revisionAfter, bytes, archiveBytes } = m;
  return { id, kind, takenAt, revision, revisionAfter, bytes, archiveBytes, files: m.files.length };
};

/**
 * An instance's snapshots: before each install, on `Backups.Schedule`, on request; each outcome on the bus, a failure
 * also in chat. At start the newest on disk is `instance:backup-found`, so `/metrics` has a last success.
 */
export function createBackupHost(
  deps: InstanceDeps,
  facts: {
    revision: () => string | null;
    previousRevision: () => string | null;
    serverRunning: () => boolean;
    /** The backup a restore waiting for its moment will put back. */
    pendingRestore: () => string | null;
  },
) {
  const { revision, serverRunning } = facts;
  const key = deps.instance.key;
  let lastSuccessAt: number | null = null;
  let timer: CronTimer | null = null;
  const notice = (message: string, reason: string) =>
    deps.bus.emit('instance:notice', { key, kind: 'backup', message, reason, at: Date.now() });

  const backups = createInstanceBackups({
    key,
    instanceDir: deps.instance.dir,
    settings: () => ({ backups: deps.instance.settings.Backups, retention: deps.instance.settings.Retention }),
    spared: async () => [(await forRollback())?.id, facts.pendingRestore()].filter((id): id is string => !!id),
    reports: {
      taken: (o: BackupOutcome) => {
        if (o.ok) lastSuccessAt = o.at;
        const removed = o.ok ? o.removed : [];
        deps.bus.emit('instance:backup', { key, ...outcomeOf(o), bytes: o.ok ? o.bytes : null, removed, at: o.at });
        if (o.ok)
          deps.log.info('backup taken', {
            id: o.id,
            kind: o.kind,
            bytes: o.archiveBytes,
            removed: o.removed.join(' '),
          });
        else {
          deps.log.error('backup failed', { kind: o.kind, error: o.error });
          notice(`The ${o.kind} backup of \`${key}\` failed: ${o.error}`, o.error);
        }
      },
      found: (o) => {
        lastSuccessAt ??= o.at;
        deps.bus.emit('instance:backup-found', { key, id: o.id, archiveBytes: o.archiveBytes, at: o.at });
      },
      afterCommand: (id, r) => {
        deps.bus.emit('instance:backup-copied', { key, id, ...r, at: Date.now() });
        if (r.ok) deps.log.info('Backups.AfterCommand done', { id });
        else {
          deps.log.error('Backups.AfterCommand failed', { id, status: r.status, output: r.output });
          // The program's output may name buckets, repositories and hosts: the daemon's log has it, chat does not.
          notice(`The off-host copy of backup ${id} of \`${key}\` failed (${r.status})`, r.status);
        }
      },
      unreadable: (file, err) =>
        deps.log.warn('a backup manifest cannot be read; left alone', { file, error: err.message }),
    },
  });

  const take = (kind: 'manual' | 'scheduled', by = '') => {
    if (by) deps.log.info(`backup asked for ${by}`);
    // Asked when each database is copied: a scheduled snapshot may wait its turn while a server launches.
    return backups.take({ kind, revision: revision(), quiet: () => !serverRunning() });
  };

  const arm = () => {
    timer?.stop();
    const { Schedule, TimeZone } = deps.instance.settings.Backups;
    timer = Schedule
      ? cronTimer({
          schedule: Schedule,
          timeZone: TimeZone,
          // The outcome is reported by `taken`; the rejection is only the same failure again.
          fire: () => void take('scheduled').catch(() => {}),
          broken: (err) =>
            deps.log.error('cannot compute the next backup time', { schedule: Schedule, error: describeError(err) }),
        })
      : null;
  };

  /** The snapshot a rollback from the installed build puts back: the newest taken just before it was installed. */
  const forRollback = () => backups.takenBefore(revision(), facts.previousRevision());

  let lastRestore: RestoreStatus | null = null;
  /** Puts `entry` back, then `then`; the outcome kept for the status, a failure told in chat. */
  const putBack = async <T>(
    entry: BackupEntry | null,
    id: string | null,
    rollback: boolean,
    then: () => Promise<T>,
  ) => {
    const record = (saved: string | null, error: string | null) => {
      lastRestore = { at: new Date().toISOString(), ok: error === null, id, saved, rollback, error };
    };
    try {
      if (entry === null)
        throw new Error(
          rollback
            ? `no snapshot was taken before build ${revision() ?? '(unknown)'} was installed; roll back without --with-data to keep the current data`
            : `there is no backup ${id} of ${key} (watchdog backups ${key} lists them)`,
        );
      const { saved, result } = await backups.replaceData(entry, revision(), then);
      record(saved.id, null);
      return { saved: saved.id, result };
    } catch (err) {
      const message = describeError(err);
      record(null, message);
      notice(`Restoring ${id ? `backup ${id}` : 'the data'} of \`${key}\` failed: ${message}`, message);
      throw err;
    }
  };

  const control: InstanceBackupsControl = {
    list: async () => {
      const rollbackId = (await forRollback())?.id;
      return (await backups.list()).map((b) => ({ ...listing(b), forRollback: b.id === rollbackId }));
    },
    take: async (by) => listing(await take('manual', by)),
    async forRollback() {
      const entry = await forRollback();
      return entry === null ? null : { ...listing(entry), forRollback: true };
    },
    has: async (id) => (await backups.find(id)) !== null,
  };

  return {
    control,
    /** The snapshot a rollback of the coming build restores; a rejection stops the install. */
    async beforeInstall(to: string | null): Promise<AfterInstall | null> {
      if (!deps.instance.settings.Backups.BeforeUpdate || revision() === null) return null;
      const snapshot = await backups.beforeInstall({ revision: revision(), revisionAfter: to });
      const { id } = snapshot;
      const warn = (what: string) => (err: unknown) => deps.log.warn(what, { id, error: describeError(err) });
      return {
        installed: (to) =>
          snapshot.installed(to).then((removed) => {
            if (removed.length > 0) deps.log.info('backups removed by retention', { removed: removed.join(' ') });
          }, warn('cannot record the installed build in the snapshot taken before it')),
        notInstalled: () =>
          snapshot
            .notInstalled()
            .then(
              () => deps.log.info('removed the snapshot taken for an install that did not happen', { id }),
              warn('cannot remove the snapshot taken for an install that did not happen'),
            ),
      };
    },
    /** The data is snapshotted, replaced by the one before the installed build; if `swapBuild` fails it goes back. */
    async rollBackWithData(swapBuild: () => Promise<string | null>): Promise<string | null> {
      const entry = await forRollback();
      return (await putBack(entry, entry?.id ?? null, true, swapBuild)).result;
    },
    /** `RESTORE` (no server runs): the current data is snapshotted, then snapshot `id` replaces it. */
    async restore(id: string): Promise<{ saved: string }> {
      return { saved: (await putBack(await backups.find(id), id, false, async () => {})).saved };
    },
    restoreStatus: (): RestoreStatus | null => lastRestore,
    status(): BackupStatus | null {
      const o = backups.last;
      if (o === null) return null;
      const lastSuccess = lastSuccessAt === null ? null : new Date(lastSuccessAt).toISOString();
      return { at: new Date(o.at).toISOString(), ...outcomeOf(o), lastSuccessAt: lastSuccess };
    },
    start(): void {
      const cutOff = 'a restore was cut off by the daemon stopping; put back the data it had moved aside';
      void backups.start().then(
        (back) => {
          if (back.length > 0) deps.log.warn(cutOff, { paths: back.join(' ') });
        },
        (err: unknown) =>
          deps.log.warn('cannot look for what an interrupted snapshot or restore left', { error: describeError(err) }),
      );
      arm();
    },
    reschedule: arm,
    async stop(): Promise<void> {
      timer?.stop();
      timer = null;
      await backups.close();
    },
  };
}
export type BackupHost = ReturnType<typeof createBackupHost>;
