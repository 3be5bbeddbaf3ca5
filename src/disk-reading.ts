import * as v from 'valibot';

/** A watched file system as disk-watch.ts last read it; a schema for the status, `/health` and OpenAPI. */
export const DiskReadingSchema = v.object({
  holds: v.pipe(v.string(), v.description('instances, working folder, or instances and working folder')),
  // The folder watched (the instance root when it holds both); its mount point, the folder itself when unread.
  path: v.string(),
  mount: v.string(),
  // Bytes the daemon may still write there; null when it could not be read.
  freeBytes: v.nullable(v.number()),
  totalBytes: v.nullable(v.number()),
  thresholdBytes: v.nullable(v.number()),
  low: v.pipe(
    v.boolean(),
    v.description('free space is below the threshold (Disk.LowFreeMegabytes or Disk.LowFreePercent)'),
  ),
  error: v.pipe(v.nullable(v.string()), v.description('why it could not be read (the folder removed, no permission)')),
  // `instances on /data: 120 MB free of 10 GB (1.2 %), below the 1 GB threshold`
  message: v.pipe(v.string(), v.description('the figures in words, as the chat is told')),
});
export type DiskReading = v.InferOutput<typeof DiskReadingSchema>;
