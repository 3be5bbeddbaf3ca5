import { KNOWN_RIDS } from '../platform.ts';

/* A server archive's name carries a platform key before its extension (`SS14.Server_linux-x64.zip`); a client's, `client`. */

const EXTENSION = /\.(zip|tar\.gz|tgz|tar)$/i;

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function isArchiveName(name: string): boolean {
  return EXTENSION.test(name);
}

export function isClientArchiveName(name: string): boolean {
  return isArchiveName(name) && /client/i.test(name);
}

/** True when `name` is an archive whose platform key (after `_` or `-`, before the extension) is exactly `rid`. */
export function archiveHasPlatform(name: string, rid: string): boolean {
  return new RegExp(`[_-]${escapeRegExp(rid)}${EXTENSION.source}`, 'i').test(name);
}

/** The platform key a server archive's name carries (a known RID), or undefined (also for client archives). */
export function serverArchivePlatform(name: string): string | undefined {
  if (!isArchiveName(name) || isClientArchiveName(name)) return undefined;
  return KNOWN_RIDS.find((rid) => archiveHasPlatform(name, rid));
}

export const SERVER_ARCHIVE_EXAMPLES =
  '<name>_<platform>.zip or <name>-<platform>.tar.gz (platform such as linux-x64, osx-arm64, win-x64)';
