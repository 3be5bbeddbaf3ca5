import { stat } from 'node:fs/promises';
import type { Bus, DiskReading } from '../bus.ts';
import type { DiskSettings } from '../config/sections/disk.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { diskSpaceOf, formatBytes, formatPercent } from '../store/disk-space.ts';

/** A folder the daemon writes to, and what people call it: `instances`, `working folder`. */
type WatchedFolder = Pick<DiskReading, 'holds' | 'path'>;

const MB = 1_000_000;
/** Back above the threshold by this share before it counts as recovered, so a disk at the line does not flap. */
const HYSTERESIS = 0.05;

/** The lower of `Disk.LowFreeMegabytes` and `Disk.LowFreePercent` of the file system's size. */
export function thresholdOf(totalBytes: number, s: DiskSettings): number {
  return Math.min(s.LowFreeMegabytes * MB, (totalBytes * s.LowFreePercent) / 100);
}

/** Free space of the file systems holding `folders`, every `Disk.CheckSeconds`; an unreadable one is a reading too. */
export function watchDisks(opts: {
  folders: WatchedFolder[];
  /** Read at every check, so a reload applies at the next one. */
  settings: () => DiskSettings;
  bus: Bus;
  log: Logger;
}) {
  const { bus, log } = opts;
  let last: DiskReading[] = [];
  /** As last told, by `holds`. */
  const low = new Set<string>();
  const unreadable = new Map<string, string>();
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();

  const check = async (): Promise<void> => {
    try {
      const s = opts.settings();
      // A reading is low below the threshold, and stays low until it is back above it with HYSTERESIS to spare.
      const groups = await groupByDevice(opts.folders);
      const readings = await Promise.all(groups.map((g) => readOne(g, s, low.has(holdsOf(g)))));
      if (stopped) return;
      last = readings;
      const at = Date.now();
      for (const r of readings) report(r, at);
      bus.emit('daemon:disk-checked', { filesystems: readings, at });
    } catch (err) {
      // Not expected (every read is caught below); said, and the next check tries again.
      log.error('disk space check failed', { error: describeError(err) });
    }
  };

  const report = (r: DiskReading, at: number) => {
    if (r.error !== null) {
      if (unreadable.get(r.holds) !== r.error) log.warn(`cannot read the disk space of ${r.holds}: ${r.error}`);
      unreadable.set(r.holds, r.error);
      return;
    }
    if (unreadable.delete(r.holds)) log.info(`the disk space of ${r.holds} can be read again`);
    const wasLow = low.has(r.holds);
    if (r.low && !wasLow) {
      low.add(r.holds);
      log.warn(`disk space low: ${r.message}`);
      bus.emit('daemon:disk-low', { ...r, at });
    } else if (!r.low && wasLow) {
      low.delete(r.holds);
      log.info(`disk space recovered: ${r.message}`);
      bus.emit('daemon:disk-recovered', { ...r, at });
    }
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = check().finally(schedule);
    }, opts.settings().CheckSeconds * 1000);
    // The watch alone never keeps the daemon alive.
    timer.unref();
  };

  running = check().finally(schedule);

  return {
    readings: (): DiskReading[] => last,
    /** The check under way (or the first one) done. */
    settled: (): Promise<void> => running,
    stop(): void {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

type Group = { folders: WatchedFolder[]; error: string | null };

const holdsOf = (g: Group) => g.folders.map((f) => f.holds).join(' and ');

/** Folders on one device together; a folder that cannot be read stands alone with its error. */
async function groupByDevice(folders: WatchedFolder[]): Promise<Group[]> {
  const groups: Group[] = [];
  const byDev = new Map<number, Group>();
  for (const f of folders) {
    const info = await stat(f.path).catch((err: unknown) => describeError(err));
    if (typeof info === 'string') {
      groups.push({ folders: [f], error: info });
      continue;
    }
    const same = byDev.get(info.dev);
    if (same) same.folders.push(f);
    else {
      const g: Group = { folders: [f], error: null };
      byDev.set(info.dev, g);
      groups.push(g);
    }
  }
  return groups;
}

async function readOne(g: Group, s: DiskSettings, wasLow: boolean): Promise<DiskReading> {
  const holds = holdsOf(g);
  const path = g.folders[0]?.path ?? '';
  const unread = (error: string): DiskReading => ({
    holds,
    path,
    mount: path,
    freeBytes: null,
    totalBytes: null,
    thresholdBytes: null,
    low: false,
    error,
    message: `${holds} (${path}): cannot read its disk space: ${error}`,
  });
  if (g.error !== null) return unread(g.error);
  try {
    const { mount, freeBytes, totalBytes } = await diskSpaceOf(path);
    const threshold = thresholdOf(totalBytes, s);
    const low = freeBytes < (wasLow ? threshold * (1 + HYSTERESIS) : threshold);
    const figures = `${holds} on ${mount}: ${formatBytes(freeBytes)} free of ${formatBytes(totalBytes)} (${formatPercent(freeBytes, totalBytes)})`;
    const message = `${figures}, ${low ? 'below' : 'above'} the ${formatBytes(threshold)} threshold`;
    return { holds, path, mount, freeBytes, totalBytes, thresholdBytes: threshold, low, error: null, message };
  } catch (err) {
    return unread(describeError(err));
  }
}

export type DiskWatch = ReturnType<typeof watchDisks>;
