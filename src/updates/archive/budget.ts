import { formatBytes } from '../../store/disk-space.ts';
import { DiskSpaceError } from '../install/disk-guard.ts';

/**
 * The bytes an extraction may still write, counted as they are written (not as the archive declares them: a zip
 * can lie about its sizes), so a small archive cannot fill the disk. Shared by the files written side by side.
 */
export interface ByteBudget {
  /** Takes `bytes` from the budget before they are written; throws DiskSpaceError(`cap`) when they do not fit. */
  charge(bytes: number): void;
}

export function byteBudget(capBytes: number): ByteBudget {
  let written = 0;
  return {
    charge(bytes) {
      written += bytes;
      if (written <= capBytes) return;
      throw new DiskSpaceError(
        'cap',
        `the archive unpacks to more than its cap of ${formatBytes(capBytes)} (its declared size plus 10 %, at most ` +
          'Updates.MaxUnpackedMegabytes); extraction was stopped and nothing was installed',
      );
    },
  };
}
