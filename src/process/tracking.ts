import { createHash, randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { makeDir } from '../make-dir.ts';
import { cgroupOf, killAndRemove, killCgroupNow, ownCgroup, probeCgroups, removeTree, subgroups } from './cgroup.ts';
import { enableControllers, type HardLimits, neededControllers, readOomKills, writeLimits } from './cgroup-limits.ts';
import { environVar, isAlive, procPids } from './proc-info.ts';
import { killPid, killUntilGone } from './process-group.ts';

/**
 * The environment variable every launch carries: `<daemon folder id>/<instance key>/<launch id>`. Every process the
 * server starts inherits it (whatever session or group it moves to), so where there is no cgroup a launch's
 * leftovers are found by it. Not a secret: it only says whose process it is.
 */
export const MARKER_ENV = 'WATCHDOG_LAUNCH';

/** What marks the processes of one instance (`<daemon id>/<key>/`); a launch's marker starts with it. */
const instanceMarker = (daemonId: string, key: string): string => `${daemonId}/${key}/`;

/** How many /proc/<pid>/environ reads a scan keeps in flight. */
const SCAN_PARALLEL = 8;

/**
 * SIGKILLs every live process whose marker starts with `prefix` (a launch's or an instance's) until none is left; the
 * pids killed. This daemon is spared (it may have been started from a shell that carries one). Empty without /proc.
 */
const killMarked = (prefix: string, timeoutMs: number): Promise<number[]> =>
  killUntilGone(async () => {
    const pids = procPids().filter((pid) => pid !== process.pid);
    const found: number[] = [];
    // Several reads in flight at once: this runs on the way to a relaunch, and one read after another waits a turn
    // of a busy event loop and thread pool each.
    let next = 0;
    const worker = async () => {
      while (next < pids.length) {
        const pid = pids[next++] as number;
        if ((await environVar(pid, MARKER_ENV))?.startsWith(prefix) && isAlive(pid)) found.push(pid);
      }
    };
    await Promise.all(Array.from({ length: SCAN_PARALLEL }, worker));
    return found.sort((a, b) => a - b).filter(killPid);
  }, timeoutMs);

export interface LaunchTrack {
  marker: string;
  cgroup: string | null;
  /** The memory limit written to its cgroup, when one was. */
  memoryMB?: number;
  /** Each hard limit asked for that could not apply, and why (the launch goes on without it). */
  limitProblems?: string[];
}

/** Finds and ends every process a launch created, including those that left its group or session. Never throws. */
export interface ProcessTracking {
  readonly mode: 'cgroup' | 'marker';
  /** `cgroup v2 (<folder>)` or `environment marker (<why no cgroup>)`. */
  readonly description: string;
  /** A new launch of `key`: its marker and, in cgroup mode, its cgroup (null when it could not be made). */
  begin(key: string, limits?: HardLimits): Promise<LaunchTrack>;
  /** Kills at the memory limit (read before `end` removes the cgroup). */
  oomKills(track: LaunchTrack): Promise<number>;
  /** Kills what is left of a launch and removes its cgroup; the pids killed. */
  end(track: LaunchTrack): Promise<number[]>;
  /** The synchronous part of a kill, for an actor's cleanup. */
  killNow(track: LaunchTrack): void;
  /** Kills every leftover of any earlier launch of `key`; the pids killed. */
  sweep(key: string): Promise<number[]>;
  owns(pid: number, key: string): Promise<boolean>;
  /** At daemon exit: removes this daemon's cgroup folder if no server is left in it. */
  close(): Promise<void>;
}

function daemonId(workDir: string): string {
  return createHash('sha256').update(workDir).digest('hex').slice(0, 12);
}

/**
 * Decides how launches are tracked: cgroup v2 when this daemon may create and join cgroups below its own (root with a
 * writable tree, or systemd's `Delegate=yes`), else the environment marker. `workDir` names its cgroups and markers,
 * so daemons in other folders differ; `forceMarker` is `Process.Tracking: Environment`; `killMs` is read at each use.
 */
export async function detectTracking(opts: {
  workDir: string;
  forceMarker: boolean;
  killMs: () => number;
}): Promise<ProcessTracking> {
  const id = daemonId(opts.workDir);
  const cg = opts.forceMarker ? { why: 'Process.Tracking is Environment' } : await ownCgroup();
  if ('why' in cg) return markerTracking(id, opts.killMs, cg.why);
  const base = join(cg.own, `watchdog-${id}`);
  const probe = await probeCgroups(base);
  if (probe !== null) return markerTracking(id, opts.killMs, probe);
  for (const child of await subgroups(base)) await removeTree(child);
  return cgroupTracking(id, cg.mount, base, opts.killMs);
}

/**
 * The cgroup folder a daemon working in `workDir` puts its launches under (it may not exist), or null without
 * cgroup v2. It is below this process's own cgroup, so a daemon started by this process would use the same.
 */
export async function cgroupFolderOf(workDir: string): Promise<string | null> {
  const cg = await ownCgroup();
  return 'why' in cg ? null : join(cg.own, `watchdog-${daemonId(workDir)}`);
}

function markerTracking(id: string, killMs: () => number, why: string): ProcessTracking {
  return {
    mode: 'marker',
    description: `environment marker (${why})`,
    begin: async (key, limits = {}) => ({
      marker: `${instanceMarker(id, key)}${randomBytes(6).toString('hex')}`,
      cgroup: null,
      limitProblems: neededControllers(limits).length === 0 ? [] : [`Limits cannot apply without cgroup v2: ${why}`],
    }),
    oomKills: async () => 0,
    end: async (track) => {
      // A cgroup recorded by an earlier daemon that had them still holds that launch's processes.
      const inGroup = track.cgroup ? await killAndRemove(track.cgroup, killMs()) : [];
      return [...inGroup, ...(await killMarked(track.marker, killMs()))];
    },
    killNow: (track) => {
      if (track.cgroup) killCgroupNow(track.cgroup);
    },
    sweep: (key) => killMarked(instanceMarker(id, key), killMs()),
    owns: async (pid, key) => (await environVar(pid, MARKER_ENV))?.startsWith(instanceMarker(id, key)) ?? false,
    close: async () => undefined,
  };
}

/** Where the daemon moves itself when its cgroup must hand the memory controller down (a name no key can have). */
const DAEMON_LEAF = '_daemon';

function cgroupTracking(id: string, mount: string, base: string, killMs: () => number): ProcessTracking {
  const marker = markerTracking(id, killMs, '');
  const keyDir = (key: string) => join(base, key);
  /** Swept by marker too (tens to hundreds of ms): once per daemon, and after a launch that got no cgroup. */
  const scanned = new Set<string>();
  return {
    mode: 'cgroup',
    description: `cgroup v2 (${base})`,
    async begin(key, limits = {}) {
      const track = await marker.begin(key);
      const cgroup = join(keyDir(key), track.marker.slice(track.marker.lastIndexOf('/') + 1));
      // Without its cgroup (the tree was removed, no descriptors left) the launch is still tracked by its marker.
      const made = await makeDir(cgroup).then(
        () => true,
        () => false,
      );
      const wanted = neededControllers(limits);
      if (!made) {
        scanned.delete(key);
        const limitProblems = wanted.length === 0 ? [] : ["Limits cannot apply: the launch's cgroup could not be made"];
        return { ...track, cgroup: null, limitProblems };
      }
      if (wanted.length === 0) return { ...track, cgroup };
      // The daemon's own cgroup down to the instance's: each hands the controllers to the next.
      const skip = await enableControllers(dirname(base), keyDir(key), wanted, join(base, DAEMON_LEAF));
      const { problems, written } = await writeLimits(cgroup, limits, skip);
      const memory = written.includes('memory.max') ? { memoryMB: limits.memoryMB } : {};
      return { ...track, cgroup, limitProblems: problems, ...memory };
    },
    oomKills: (track) => (track.cgroup ? readOomKills(track.cgroup) : Promise.resolve(0)),
    end: async (track) => (track.cgroup ? killAndRemove(track.cgroup, killMs()) : marker.end(track)),
    killNow: marker.killNow,
    async sweep(key) {
      const killed: number[] = [];
      for (const dir of await subgroups(keyDir(key))) killed.push(...(await killAndRemove(dir, killMs())));
      // A process of a launch that had no cgroup, or of one made before cgroups were in use.
      if (!scanned.has(key)) {
        scanned.add(key);
        killed.push(...(await marker.sweep(key)));
      }
      return killed;
    },
    async owns(pid, key) {
      const group = await cgroupOf(pid, mount);
      return (group?.startsWith(`${keyDir(key)}/`) ?? false) || marker.owns(pid, key);
    },
    close: () => removeTree(base),
  };
}
