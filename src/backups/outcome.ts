/** What an instance's snapshots tell the daemon: how each went, the one found at start, the off-host copies. */
import type { AfterCommandResult } from './after-command.ts';
import type { BackupKind, BackupManifest } from './manifest.ts';

/** How a snapshot went, for the status, `/metrics` and chat. */
export type BackupOutcome =
  | { ok: true; kind: BackupKind; id: string; bytes: number; archiveBytes: number; removed: string[]; at: number }
  | { ok: false; kind: BackupKind; reason: 'space' | 'failed'; error: string; at: number };

export type BackupSuccess = Extract<BackupOutcome, { ok: true }>;

/** The outcome of `manifest`, a snapshot taken (with the ids retention then `removed`) or found, at `at`. */
export function successOf(manifest: BackupManifest, removed: string[], at: number): BackupSuccess {
  const { kind, id, bytes, archiveBytes } = manifest;
  return { ok: true, kind, id, bytes, archiveBytes, removed, at };
}

export interface BackupReports {
  taken(outcome: BackupOutcome): void;
  /** At daemon start, the newest snapshot on disk (an earlier daemon took it): the last one until the next is taken. */
  found(outcome: BackupSuccess): void;
  afterCommand(id: string, result: AfterCommandResult): void;
  /** A manifest that could not be read (left alone). */
  unreadable(file: string, err: Error): void;
}
