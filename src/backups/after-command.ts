import { PassThrough } from 'node:stream';
import { describeError } from '../errors.ts';
import { lastLines, runChild } from '../process/run-child.ts';
import type { BackupEntry } from './catalog.ts';

/** `status`: `exit code 3`, `killed by SIGKILL`, `could not start …`; `output`: the last lines of both streams. */
export interface AfterCommandResult {
  ok: boolean;
  status: string;
  output: string;
}

/**
 * The operator's off-host copy (rclone, restic, …), no shell, in the instance folder and its own process group,
 * bounded, the snapshot in its environment. Never throws: a failure is its result.
 */
async function runAfterCommand(
  command: readonly string[],
  snapshot: BackupEntry,
  opts: { cwd: string; timeoutMs: number; signal: AbortSignal },
): Promise<AfterCommandResult> {
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
    const result = await runChild(program, args, {
      cwd: opts.cwd,
      env,
      signal: opts.signal,
      timeoutMs: opts.timeoutMs,
      sink: new PassThrough().resume(),
      what: 'Backups.AfterCommand',
    });
    const status = result.signal ? `killed by ${result.signal}` : `exit code ${result.code}`;
    return { ok: result.code === 0, status, output: lastLines(result.tail, 10) };
  } catch (err) {
    return { ok: false, status: describeError(err), output: '' };
  }
}

/** The off-host copies under way, not awaited; retention spares a snapshot that `has` one. */
export function createOffHostCopies(ended: (id: string, result: AfterCommandResult) => void) {
  const running = new Set<string>();
  const stopping = new AbortController();
  return {
    has: (id: string) => running.has(id),
    start(command: readonly string[], snapshot: BackupEntry, opts: { cwd: string; timeoutMs: number }): void {
      running.add(snapshot.id);
      void runAfterCommand(command, snapshot, { ...opts, signal: stopping.signal })
        .then((result) => ended(snapshot.id, result))
        .finally(() => running.delete(snapshot.id));
    },
    stop: () => stopping.abort(new Error('the daemon is stopping')),
  };
}
