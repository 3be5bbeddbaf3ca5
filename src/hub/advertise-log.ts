/**
 * The engine's hub lines in a server's log (RobustToolbox `HubManager`, sawmill `hub`): what the daemon learns of
 * advertising without asking a hub. Matched on the message, whatever the log prefix ([INFO] hub: …).
 */
export type AdvertiseEvent =
  | { type: 'advertised'; hub: string; address: string }
  | { type: 'guessed'; address: string }
  | { type: 'refused'; hub: string; status: string; text: string }
  | { type: 'failed'; hub: string };

const ADVERTISED = /Successfully advertised to (\S+) with address (\S+)/;
const GUESSED = /Guessed server address to be (\S+)/;
const REFUSED = /Error status while advertising server: \[([^\]]*)\] (.*), from (\S+)\s*$/;
const FAILED = /Exception while trying to advertise server to (\S+)/;

export function advertiseEventOf(line: string): AdvertiseEvent | null {
  // Cheap test first: nearly every line is about something else.
  if (!line.includes('advertis') && !line.includes('Guessed server address')) return null;
  let m = REFUSED.exec(line);
  if (m) return { type: 'refused', status: m[1] ?? '', text: (m[2] ?? '').slice(0, 300), hub: m[3] ?? '' };
  m = ADVERTISED.exec(line);
  if (m) return { type: 'advertised', hub: m[1] ?? '', address: m[2] ?? '' };
  m = GUESSED.exec(line);
  if (m) return { type: 'guessed', address: m[1] ?? '' };
  m = FAILED.exec(line);
  if (m) return { type: 'failed', hub: m[1] ?? '' };
  return null;
}
