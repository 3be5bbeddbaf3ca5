import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { type InstanceData, writeInstanceData } from '../store/instance-data.ts';

export interface DataWriter {
  /**
   * Merges `patch` into the instance's data and writes data.json. Never rejects: a failed write (full disk, removed
   * or read-only folder) leaves the previous data.json whole (the write is atomic), is logged once and is tried
   * again every `retryMs()` with the newest data until one succeeds.
   */
  write(patch: Partial<InstanceData>, opts?: { durable?: boolean }): Promise<void>;
  current(): InstanceData;
}

/** data.json writes for one instance go through one copy of its data, so fields never overwrite each other. */
export function createDataWriter(dir: string, initial: InstanceData, log: Logger, retryMs: () => number): DataWriter {
  let data = initial;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;

  const attempt = async (opts?: { durable?: boolean }): Promise<void> => {
    try {
      await writeInstanceData(dir, data, opts);
      if (failing) log.info('data.json written again');
      failing = false;
    } catch (err) {
      if (!failing)
        log.error(`${describeError(err)}; the previous data.json is kept, trying again every ${retryMs() / 1000} s`, {
          dir,
        });
      failing = true;
      retryLater();
    }
  };
  const retryLater = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void attempt();
    }, retryMs());
    // A retry never keeps the daemon alive; the data is written by the next change or start anyway.
    timer.unref();
  };

  return {
    write(patch, opts) {
      data = { ...data, ...patch };
      return attempt(opts);
    },
    current: () => data,
  };
}
