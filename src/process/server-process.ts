/** What a launched game server is to its owner (made by spawn.ts and adopted-process.ts). */
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
  /** Signals the whole process group (default SIGKILL). Never throws. */
  kill(signal?: NodeJS.Signals): void;
  /** Stops following output and lets the daemon exit while the server keeps running (PersistServers). */
  detach(): void;
}

export interface SpawnOptions {
  logDir: string;
  /** Every output line; with `persist` both streams share one file and arrive as 'stdout'. */
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
  /** PersistServers: the server writes straight to the log file (O_APPEND), never to a pipe. */
  persist: boolean;
  rotation?: LogRotation;
  /** Poll interval for following the log file in persist mode. */
  followMs?: number;
  /** `Timing.LogRetrySeconds`. */
  retryMs?: number;
  health?: WriteHealth;
  /**
   * server.log's outage, kept by the caller across launches: a launch blocked for want of descriptors cannot open
   * the log either, and one outage over many such attempts is reported once. Absent: each launch has its own.
   */
  outage?: WriteOutage;
  /** A cgroup folder the server is put in before it runs. */
  cgroup?: string | null;
  /** The console FIFO's path: the server's standard input (absent: /dev/null). */
  console?: string | null;
}

export type Emit = (stream: 'stdout' | 'stderr', line: string) => void;
