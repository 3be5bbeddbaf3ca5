import { fromPromise } from 'xstate';
import type {
  CheckInput,
  CheckOutput,
  RollbackInput,
  RollbackOutput,
  UpdateInput,
  UpdateOutput,
} from '../../machines/instance.types.ts';
import type { Bus } from '../bus.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { UpdateProvider } from '../updates/provider.ts';

export interface UpdateHost {
  readonly key: string;
  readonly log: Logger;
  readonly bus: Bus;
  provider(): UpdateProvider | null;
  /** Persists a newly installed revision in data.json before the machine hears of it. */
  recordRevision(revision: string): Promise<void>;
}

/** The `update` actor: check, and install when available, before a launch. Rejections become `update-failed`. */
export function createUpdateActor(host: UpdateHost) {
  return fromPromise<UpdateOutput, UpdateInput>(async ({ input, signal }) => {
    const provider = host.provider();
    if (!provider) return { revision: input.revision, changed: false };
    const started = Date.now();
    const at = () => Date.now();
    host.bus.emit('instance:update', { key: host.key, phase: 'check', revision: input.revision, at: at() });
    try {
      const check = await provider.check(input.revision, signal);
      if (!check.available) {
        host.bus.emit('instance:update', { key: host.key, phase: 'none', revision: input.revision, at: at() });
        return { revision: input.revision, changed: false };
      }
      host.log.info('installing update', { from: input.revision, to: check.revision ?? '(newest)' });
      const revision = await provider.apply(input.revision, signal);
      await host.recordRevision(revision);
      host.bus.emit('instance:update', {
        key: host.key,
        phase: 'done',
        revision,
        durationMs: Date.now() - started,
        at: at(),
      });
      host.log.info('update installed', { revision, seconds: (Date.now() - started) / 1000 });
      return { revision, changed: revision !== input.revision };
    } catch (err) {
      const message = describeError(err);
      // Logged once, where the machine reports the failure (instance.ts).
      host.bus.emit('instance:update', { key: host.key, phase: 'failed', error: message, at: at() });
      throw err;
    }
  });
}

/** The `checkUpdate` actor: only asks the provider, for UPDATE_CHECK. */
export function createCheckActor(host: UpdateHost) {
  return fromPromise<CheckOutput, CheckInput>(async ({ input, signal }) => {
    const provider = host.provider();
    if (!provider) {
      host.log.info('update requested, but this instance has no UpdateType');
      return { available: false };
    }
    // A failure is logged once, where the machine reports it (instance.ts).
    const check = await provider.check(input.revision, signal);
    host.log.info(check.available ? 'update available' : 'no update available', { current: input.revision });
    return { available: check.available };
  });
}

/**
 * The `rollback` actor: swaps `bin.prev` back into `bin/` (and the revisions in data.json). The machine invokes it
 * only with no server running; a failure (no bin.prev) is reported by the machine as `rollback-failed`.
 */
export function createRollbackActor(rollback: () => Promise<string | null>) {
  return fromPromise<RollbackOutput, RollbackInput>(async () => ({ revision: await rollback() }));
}
