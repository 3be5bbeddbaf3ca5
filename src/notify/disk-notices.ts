import type { BusEvents, Notice } from '../bus.ts';

/**
 * The chat notice for a watched file system going low, and the one when it is back: one each per crossing (the
 * watcher emits `disk:low` and `disk:recovered` only on a change), about the host rather than an instance.
 */
export function noticeFromDisk(e: BusEvents['disk:low'], recovered: boolean): Notice {
  const fields = [{ name: 'Folder', value: e.path }];
  return recovered
    ? {
        key: '',
        kind: 'disk',
        title: 'Disk space recovered',
        message: `Disk space is back: ${e.message}.`,
        fields,
        at: e.at,
      }
    : { key: '', kind: 'disk', title: 'Disk space low', message: `Disk space is low: ${e.message}.`, fields, at: e.at };
}
