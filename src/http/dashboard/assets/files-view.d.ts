// Types of files-view.js for the daemon's TypeScript (the page itself is plain JavaScript).
import type { FileListing } from '../../schemas.ts';

export interface FileRow {
  name: string;
  /** A folder: its path, opened in the panel. */
  folder: string | null;
  /** A file: its download link. */
  href: string | null;
  size: number | null;
  modified: string;
}

export function filesUrl(key: string, path: string): string;
export function parentPath(path: string): string | null;
export function fileRows(key: string, listing: FileListing): FileRow[];
