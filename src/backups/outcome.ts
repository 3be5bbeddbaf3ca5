/** What an instance's snapshots tell the daemon: how each went, the one found at start, the off-host copies. */
import type { AfterCommandResult } from './after-command.ts';
import type { BackupKind } from './manifest.ts';

/** How a snapshot went, for the status, `/metrics` and chat. */
export type BackupOutcome =
  | { ok: true; kind: BackupKind; id: string; bytes: number; archiveBytes: number; removed: string[]; at: number }
  | { ok: false; kind: BackupKind; reason: 'space' | 'failed'; error: string; at: number };

export type BackupSuccess = Extract<BackupOutcome, { ok: true }>;

export interface BackupReports {
  taken(outcome: BackupOutcome): void;
  /** At daemon start, the newest snapshot on disk (an earlier daemon took it): the last one until the next is taken. */
  found(outcome: BackupSuccess): void;
  afterCommand(id: string, result: AfterCommandResult): void;
  /** A manifest that could not be read (left alone). */
  unreadable(file: string, err: Error): void;
}
