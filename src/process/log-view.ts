import { readFileSync } from 'node:fs';
import { logPath } from './log-file.ts';
import { followLog } from './log-tail.ts';

export interface LogTail {
  /** The last complete lines, oldest first, reaching into server.log.1, .2 … when server.log is short. */
  lines: string[];
  /** An unterminated last line of server.log (a server mid-write), or null. */
  partial: string | null;
  /** Byte offset in server.log just after the last complete line: where following picks up. */
  offset: number;
  /** server.log exists. */
  found: boolean;
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

function readOrNull(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

/**
 * The last `n` lines of `<logDir>/server.log`. Unlike `tailLog` from src/process/log-tail.ts, this
 * also returns the byte offset the lines end at, so `-f` continues exactly there: no line printed
 * twice or skipped between the tail and the follow.
 */
export function readLastLines(logDir: string, n: number): LogTail {
  const current = readOrNull(logPath(logDir));
  if (current === null) return { lines: [], partial: null, offset: 0, found: false };
  const offset = current.lastIndexOf(0x0a) + 1;
  const rest = current.subarray(offset).toString('utf8');
  let lines = splitLines(current.subarray(0, offset).toString('utf8'));
  for (let i = 1; lines.length < n; i++) {
    const older = readOrNull(logPath(logDir, i));
    if (older === null) break;
    lines = [...splitLines(older.toString('utf8')), ...lines];
  }
  return { lines: n <= 0 ? [] : lines.slice(-n), partial: rest === '' ? null : rest, offset, found: true };
}

/**
 * Passes on lines appended to server.log from `offset` on (following rotation to server.log.1)
 * until `until` resolves; then reads what is left and stops. Resolves to the byte offset reached in the
 * server.log of that moment, where a later `followLines` picks up (the CLI's `logs -f` over HTTP resumes there).
 * Used by `watchdog logs -f` on this machine and by the daemon's `GET /instances/:key/logs?follow=1`.
 */
export async function followLines(
  logDir: string,
  offset: number,
  write: (line: string) => void,
  until: Promise<void>,
): Promise<number> {
  let reached = offset;
  const follower = followLog(logDir, write, { startOffset: offset, intervalMs: 200, onPoll: (at) => (reached = at) });
  // followLog's timer is unref'd (it must not keep the daemon alive); here following is the whole point.
  const keepAlive = setInterval(() => {}, 60_000);
  try {
    await until;
  } finally {
    clearInterval(keepAlive);
    follower.stop();
  }
  return reached;
}
