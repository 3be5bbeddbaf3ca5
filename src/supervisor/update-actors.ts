import { fromPromise } from 'xstate';
import type { CheckInput, UpdateInput } from '../../machines/instance.setup.ts';
import type { CheckOutput, UpdateOutput } from '../../machines/instance.types.ts';
import type { Bus, BusEvents } from '../bus.ts';
import { monotonicMs, stampNow } from '../clock.ts';
import { describeError, UpdateError } from '../errors.ts';
import { DiskSpaceError } from '../updates/install/disk-guard.ts';
import type { InstanceDeps } from './instance-deps.ts';
import type { UpdateCheckStatus } from './status.ts';

/** The deps object itself, so a reload's new provider is used. */
export type UpdateHost = Pick<InstanceDeps, 'instance' | 'log' | 'bus' | 'provider' | 'recordRevision'>;

/** What runs before an install is told how it ended; neither call rejects. */
export interface AfterInstall {
  /** `revision` (maybe newer than the one found) was swapped in. */
  installed(revision: string): Promise<void>;
  notInstalled(): Promise<void>;
}

/** The `update` actor: check, and install when available, before a launch. Rejections become `update-failed`. */
export function createUpdateActor(
  host: UpdateHost,
  /** Runs before the build is swapped in: the data snapshot (`Backups.BeforeUpdate`); a rejection stops the install. */
  beforeInstall: (to: string | null) => Promise<AfterInstall | null> = async () => null,
) {
  return fromPromise<UpdateOutput, UpdateInput>(async ({ input, signal }) => {
    const provider = host.provider;
    if (!provider) return { revision: input.revision, changed: false };
    const started = monotonicMs();
    const asker = input.by ? { by: input.by } : {};
    tell(host, { phase: 'check', revision: input.revision });
    let during: 'check' | 'install' = 'check';
    try {
      const check = await provider.check(input.revision, signal);
      if (!check.available) {
        tell(host, { phase: 'none', revision: input.revision });
        return { revision: input.revision, changed: false };
      }
      host.log.info('installing update', { from: input.revision, to: check.revision ?? '(newest)' });
      during = 'install';
      const after = await beforeInstall(check.revision ?? null).catch((err: unknown) => {
        throw new UpdateError(`not installed, the snapshot before it failed: ${describeError(err)}`, { cause: err });
      });
      // apply leaves bin/ as it was when it throws (UpdateProvider), so a rejection means nothing was swapped in.
      const revision = await provider.apply(input.revision, signal).catch(async (err: unknown) => {
        await after?.notInstalled();
        throw err;
      });
      await (revision === input.revision ? after?.notInstalled() : after?.installed(revision));
      await host.recordRevision(revision);
      tell(host, { phase: 'done', revision, durationMs: monotonicMs() - started, ...asker });
      host.log.info('update installed', { revision, seconds: (monotonicMs() - started) / 1000 });
      return { revision, changed: revision !== input.revision };
    } catch (err) {
      const message = describeError(err);
      // A found build the disk could not take failed to install, even when the check staged it (staged-build.ts).
      if (diskSpaceError(err)) during = 'install';
      // Logged once, where the machine reports the failure (instance.ts).
      tell(host, { phase: 'failed', error: message, during, ...asker });
      throw err;
    }
  });
}

function tell(host: UpdateHost, e: Omit<BusEvents['instance:update'], 'key' | 'at'>): void {
  host.bus.emit('instance:update', { key: host.instance.key, ...e, at: Date.now() });
}

function diskSpaceError(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++)
    if (e instanceof DiskSpaceError) return true;
  return false;
}

/** The `checkUpdate` actor: only asks the provider, for UPDATE_CHECK. */
export function createCheckActor(host: UpdateHost) {
  return fromPromise<CheckOutput, CheckInput>(async ({ input, signal }) => {
    const provider = host.provider;
    if (!provider) {
      host.log.info('update requested, but this instance has no UpdateType');
      return { available: false, at: stampNow() };
    }
    const check = await provider.check(input.revision, signal).catch((err: unknown) => {
      // A failure is logged once, where the machine reports it. A found build the disk cannot take is a failed update
      // the operator must act on: told as one, the check ends with nothing available.
      if (!diskSpaceError(err)) throw err;
      const error = describeError(err);
      host.log.error('update failed; the installed build keeps running', { error });
      tell(host, { phase: 'failed', error, during: 'install' });
      return null;
    });
    if (check !== null)
      host.log.info(check.available ? 'update available' : 'no update available', { current: input.revision });
    return { available: check?.available ?? false, at: stampNow() };
  });
}

/**
 * Update checks' outcomes, so a failing check is not read as "no update": the last for the status, each on the bus,
 * and one chat notice when they have failed for `alertAfterMs`, one more when they work again.
 */
export function createCheckRecord(opts: { key: string; bus: Bus; alertAfterMs: () => number }) {
  const { key, bus } = opts;
  let last: { at: number; result: UpdateCheckStatus['result']; error: string | null } | null = null;
  let failingSince: number | null = null;
  let lastSuccessAt: number | null = null;
  let told = false;
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

  return {
    succeeded(available: boolean, at: number): void {
      last = { at, result: available ? 'available' : 'none', error: null };
      bus.emit('instance:update-check', { key, ok: true, available, error: null, at });
      if (told && failingSince !== null)
        bus.emit('instance:notice', {
          key,
          kind: 'update-check',
          title: 'Update checks work again',
          message: `Update checks of \`${key}\` work again (they had failed since ${iso(failingSince)}).`,
          at,
        });
      failingSince = null;
      lastSuccessAt = at;
      told = false;
    },

    failed(error: string, at: number): void {
      last = { at, result: 'failed', error };
      failingSince ??= at;
      bus.emit('instance:update-check', { key, ok: false, available: false, error, at });
      if (told || at - failingSince < opts.alertAfterMs()) return;
      told = true;
      const since =
        lastSuccessAt === null ? 'no check has worked since the daemon started' : `last success ${iso(lastSuccessAt)}`;
      bus.emit('instance:notice', {
        key,
        kind: 'update-check',
        title: 'Update checks failing',
        message: `Update checks of \`${key}\` have failed since ${iso(failingSince)} (${since}): ${error}. The server runs on without updates until they work.`,
        reason: error,
        at,
      });
    },

    status(): UpdateCheckStatus | null {
      if (last === null) return null;
      return {
        at: new Date(last.at).toISOString(),
        result: last.result,
        error: last.error,
        failingSince: iso(failingSince),
        lastSuccessAt: iso(lastSuccessAt),
      };
    },
  };
}

export type CheckRecord = ReturnType<typeof createCheckRecord>;
