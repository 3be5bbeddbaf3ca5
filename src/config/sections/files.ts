/** `Servers.Instances.<key>.Files`: the instance folders whose files may be listed and downloaded (read-only). */
import * as v from 'valibot';
import { checkedText } from '../numbers.ts';

/**
 * The engine's replays (`replay.directory` under the data directory, `data/`), server logs and crash dumps. Not the
 * snapshots: they hold player data and database passwords, more than a token should read unless an operator says so.
 */
export const DEFAULT_FILE_FOLDERS: readonly string[] = ['data/replays', 'logs', 'dumps'];

/** Why `path` cannot name a shared folder, or null: relative, `/`-separated, no dot, empty or hidden segment. */
export function folderProblem(path: string): string | null {
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'expected a path relative to the instance folder';
  if (/[\\\0]/.test(path)) return 'expected / as the only separator, and no NUL';
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    return 'expected no empty, "." or ".." segment (and no leading or trailing /)';
  if (segments.some((s) => s.startsWith('.'))) return 'expected no hidden (.-named) folder';
  return null;
}

const Folder = checkedText('expected a folder path', folderProblem);

export const FilesSchema = v.optional(
  v.strictObject(
    {
      /** Listed and downloadable, each with everything below it; anything else in the instance folder is not. */
      Folders: v.optional(v.array(Folder, 'expected a list of folders relative to the instance folder'), () => [
        ...DEFAULT_FILE_FOLDERS,
      ]),
    },
    'expected a map of file sharing settings (Folders)',
  ),
  {},
);
