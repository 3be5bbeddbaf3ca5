import { PassThrough } from 'node:stream';
import { describeError } from '../errors.ts';
import { lastLines, runChild } from '../process/run-child.ts';
import type { BackupEntry } from './catalog.ts';

/** How `Backups.AfterCommand` ended: the exit status and the end of its output, for the log, status and chat. */
export interface AfterCommandResult {
  ok: boolean;
  /** `exit code 0`, `exit code 3`, `killed by SIGKILL`, `took longer than 600 s and was stopped`, `could not start …`. */
  status: string;
  /** The last lines of stdout and stderr together. */
  output: string;
}

/**
 * Runs the operator's off-host copy (rclone, rsync, restic, aws) after a snapshot: the program and its arguments as
 * configured (no shell), in the instance folder, in its own process group, bounded by `timeoutMs`, with the
 * snapshot in its environment: WATCHDOG_BACKUP_PATH (the archive), WATCHDOG_BACKUP_MANIFEST, WATCHDOG_BACKUP_ID and
 * WATCHDOG_INSTANCE. Never throws: a failure is its result.
 */
export async function runAfterCommand(
  command: readonly string[],
  snapshot: BackupEntry,
  opts: { cwd: string; timeoutMs: number; signal: AbortSignal },
): Promise<AfterCommandResult> {
  const [program, ...args] = command;
  if (program === undefined) return { ok: false, status: 'no program configured', output: '' };
  const env = {
    ...withoutSecrets(process.env),
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

/**
 * The off-host copies under way, one per snapshot, not awaited (an update does not wait for an upload): retention
 * asks `has` and leaves a snapshot alone until its copy ended; `stop` ends those still running when the daemon stops.
 */
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

/**
 * The daemon's environment without what holds its secrets: the control token, the Admin login, and every
 * configuration variable (`Servers__Instances__main__ApiToken`, …). rclone, restic and aws keep their own (`RESTIC_*`).
 */
function withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(env).filter(([name]) => !name.includes('__') && !/^WATCHDOG_(TOKEN|ADMIN)$/.test(name)),
  );
}
