import type { BackupListing } from '../../../src/supervisor/status.ts';

/** One snapshot as the routes list it, for tests that need one. */
export const LISTING: BackupListing = {
  id: '20261128T060000Z-r1',
  kind: 'manual',
  takenAt: '2026-11-28T06:00:00.000Z',
  revision: 'r1',
  revisionAfter: null,
  bytes: 10,
  archiveBytes: 5,
  files: 2,
};
