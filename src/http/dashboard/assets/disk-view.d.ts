// Types of disk-view.js for the daemon's TypeScript (the page itself is plain JavaScript).
import type { DiskReading } from '../../../bus.ts';

export function lowDiskLines(statuses: ReadonlyArray<{ disk?: DiskReading[] }>): string[];
