/**
 * What a launched game server is to its owner (src/process/spawn.ts makes one; adopted-process.ts another).
 */

import type { LogRotation } from './log-file.ts';
import type { WriteHealth, WriteOutage } from './write-outage.ts';

export interface ExitStatus {
  code: number | null;
  signal: string | null;
  /** The launch's memory limit (MB) when the kernel killed it there (its cgroup's `memory.events` `oom_kill`). */
  memoryLimitMB?: number;
}

/** A launched game server, owned by one `runProcess` actor. */
export interface ServerProcess {
  pid: number;
  /** Kernel start time (see `readProcessStartTime`), for reattach verification; null if it exited at once. */
  startTime: string | null;
  /** Resolves once the process has exited (and its output has been read). Never rejects. */
  exited: Promise<ExitStatus>;
  /**
   * Signals the whole process group (default SIGKILL), so the server's children go too. Never throws.
   * Still useful after the leader exited: a group id cannot be reused while any member lives.
   */
  kill(signal?: NodeJS.Signals): void;
  /** Stops following output and lets the daemon exit while the server keeps running (PersistServers). */
  detach(): void;
}

export interface SpawnOptions {
  /** Folder for server.log and its rotations (normally `<instance>/logs`). */
  logDir: string;
  /** Every output line; with `persist` both streams share one file and arrive as 'stdout'. */
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
  /**
   * PersistServers: the server writes straight to the log file (O_APPEND), never to a pipe, so it survives
   * the daemon. Rotation then happens at launch and, while attached, by copy-and-truncate.
   */
  persist: boolean;
  rotation?: LogRotation;
  /** Poll interval for following the log file in persist mode. */
  followMs?: number;
  /** While server.log cannot be written, how often to try again (`Timing.LogRetrySeconds`). */
  retryMs?: number;
  /** Told when server.log stops being written, how many lines are dropped, and when it works again. */
  health?: WriteHealth;
  /**
   * server.log's outage, kept by the caller across launches: a launch blocked for want of descriptors cannot open
   * the log either, and one outage over many such attempts is reported once. Absent: each launch has its own.
   */
  outage?: WriteOutage;
  /** A cgroup folder the server is put in before it runs (process tracking, `src/process/tracking.ts`). */
  cgroup?: string | null;
  /** The console FIFO's path (`console-fifo.ts`): it becomes the server's standard input. Absent: /dev/null. */
  console?: string | null;
}

/** Where spawn.ts hands each line of a server's output (with `persist`, both streams arrive as 'stdout'). */
export type Emit = (stream: 'stdout' | 'stderr', line: string) => void;
