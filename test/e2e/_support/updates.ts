/**
 * Shared parts of the update end-to-end tests (not a test file): an appsettings.yml for instances with an
 * UpdateType, reading what a running build says about itself, and the instance folder's state.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { appsettingsYaml } from '../../_support/config.ts';
import type { RunningDaemon, StatusJson } from '../../_support/daemon.ts';
import { waitFor } from '../../_support/env.ts';
import type { Cdn } from '../../fixtures/archives/serve.ts';
import {
  type BuiltArchive,
  describeArchive,
  type ManifestBuild,
  manifestDoc,
  writeServerBuild,
} from '../../fixtures/builds/build.ts';

export const TOKEN = 'tok';

/** A daemon's work folder (a RunningDaemon is one). */
export type WorkDir = Pick<RunningDaemon, 'dir'>;

export interface UpdateInstance {
  key: string;
  port: number;
  /** Left out: the default `bin/Robust.Server`. */
  runCommand?: string;
  updateType?: 'Manifest' | 'Git' | 'CiServer' | 'Local' | 'Dummy';
  updates?: Record<string, unknown>;
  env?: Record<string, string>;
}

/** Daemon-wide choices of updatesConfig: by default `PersistServers: false` on a port the system picks. */
export interface UpdatesConfigOptions {
  /** `Process.PersistServers`. */
  persistServers?: boolean;
  /**
   * The daemon's port in `Urls` (default 0: any free one). Give a fixed one with `persistServers`: a server left
   * running checks in to the address it was launched with, so the next daemon must listen there again.
   */
  urlsPort?: number;
}

/** appsettings.yml: loopback on a free port, every wait shrunk, `TimeoutSeconds: 4`, check-ins every 0.3 s. */
export function updatesConfig(instances: UpdateInstance[], opts: UpdatesConfigOptions = {}): string {
  const entries: Record<string, unknown> = {};
  for (const i of instances) {
    entries[i.key] = {
      ApiToken: TOKEN,
      ApiPort: i.port,
      ...(i.runCommand ? { RunCommand: i.runCommand } : {}),
      TimeoutSeconds: 4,
      DumpOnTimeout: false,
      Arguments: ['--cvar', `net.port=${i.port}`, '--cvar', 'watchdog.checkin_interval=0.3'],
      ...(i.updateType ? { UpdateType: i.updateType } : {}),
      ...(i.updates ? { Updates: i.updates } : {}),
      // A server orphaned by a failed run must not live for ever.
      EnvironmentVariables: { FIXTURE_LIFETIME_MS: '120000', ...i.env },
    };
  }
  return appsettingsYaml(entries, {
    urlsPort: opts.urlsPort,
    persist: opts.persistServers,
    timing: {
      ShutdownRequestSeconds: 1,
      ShutdownExitSeconds: 1,
      BackoffInitialSeconds: 0.3,
      BackoffMaxSeconds: 1,
      StableRunSeconds: 30,
      WebhookRetryBaseSeconds: 0.1,
      RejectedCheckinLogSeconds: 0,
    },
  });
}

/** appsettings.yml for one Manifest instance on linux-x64 reading `manifestUrl`. */
export const manifestConfig = (
  key: string,
  port: number,
  manifestUrl: string,
  downloadTimeoutSeconds: number,
  opts: UpdatesConfigOptions = {},
) =>
  updatesConfig(
    [
      {
        key,
        port,
        updateType: 'Manifest',
        updates: { ManifestUrl: manifestUrl, Platform: 'linux-x64', DownloadTimeoutSeconds: downloadTimeoutSeconds },
      },
    ],
    opts,
  );

/** What the test build's game server answers on GET /status. */
export interface BuildStatus {
  build: string;
  pid: number;
  argv: string[];
  cwd: string;
  /** A build with `schema.txt`: the database schema it runs on and the rows it reads. */
  game?: { schema: number; rows: number };
}

export async function buildStatus(port: number): Promise<BuildStatus> {
  const res = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(2000) });
  if (!res.ok) throw new Error(`game server /status answered ${res.status}`);
  return (await res.json()) as BuildStatus;
}

/** Where the daemon (or a daemon's work folder, `{ dir }`) keeps an instance. */
export const instanceDir = (d: WorkDir, key: string) => join(d.dir, 'instances', key);

export interface DataJson {
  revision: string | null;
  previousRevision?: string | null;
  updateType: string | null;
}

export async function dataJson(d: WorkDir, key: string): Promise<DataJson> {
  return JSON.parse(await readFile(join(instanceDir(d, key), 'data.json'), 'utf8')) as DataJson;
}

/** `build.txt` of bin/ (or bin.prev/), trimmed; null when absent. */
export async function builtLabel(d: WorkDir, key: string, folder: 'bin' | 'bin.prev' = 'bin'): Promise<string | null> {
  return readFile(join(instanceDir(d, key), folder, 'build.txt'), 'utf8').then(
    (t) => t.trim(),
    () => null,
  );
}

/** Entries left in the instance's `.update/` scratch folder ([] when it is absent). */
export async function scratchLeft(d: WorkDir, key: string): Promise<string[]> {
  return readdir(join(instanceDir(d, key), '.update')).catch(() => []);
}

/** Waits until the instance is `running` and its game server answers /status with `build` (and a pid not in `not`). */
export async function runningBuild(
  d: RunningDaemon,
  key: string,
  port: number,
  build: string,
  opts: { notPid?: number | null; timeoutMs?: number } = {},
): Promise<{ status: StatusJson; server: BuildStatus }> {
  try {
    return await waitFor(
      `${key} running build ${build}`,
      async () => {
        const status = await d.status(key, TOKEN);
        if (status.state !== 'server.running' || status.pid === null || status.pid === opts.notPid) return undefined;
        const server = await buildStatus(port);
        return server.build === build && server.pid === status.pid ? { status, server } : undefined;
      },
      opts.timeoutMs ?? 20_000,
      50,
    );
  } catch (err) {
    // What the daemon said about this instance is what explains a wait that never ended.
    const lines = d
      .log()
      .split('\n')
      .filter((l) => l.includes(`[watchdog:${key}`))
      .slice(-25);
    throw new Error(`${(err as Error).message}\n${lines.join('\n')}`, { cause: err });
  }
}

/** The daemon's log from `from` on (a length of `d.log()` taken earlier). */
export const logSince = (d: RunningDaemon, from: number) => d.log().slice(from);

export { reported } from '../../_support/daemon.ts';

export { alive } from '../../_support/procs.ts';

/** Serves build A (a zip made in `dir`) and a manifest at `manifestPath` that lists it alone; returns its entry. */
export async function serveBuildA(cdn: Cdn, dir: string, manifestPath: string): Promise<ManifestBuild> {
  const a = await writeServerBuild(join(dir, 'A.zip'), 'A');
  cdn.set('/files/A.zip', { kind: 'file', file: a.path });
  const good = { key: 'build-A', time: '2024-05-01T10:00:00Z', url: cdn.url('/files/A.zip'), sha256: a.sha256 };
  cdn.set(manifestPath, { kind: 'json', body: manifestDoc([good]) });
  return good;
}

/**
 * Serves the archive at `path` as build `key` beside `good` in the manifest at `manifestPath`, both hashes the
 * archives' own; returns the archive as described.
 */
export async function offerBuild(
  cdn: Cdn,
  manifestPath: string,
  good: ManifestBuild,
  offered: { path: string; key: string; time: string; route: string },
) {
  const c = await describeArchive(offered.path);
  cdn.set(offered.route, { kind: 'file', file: c.path });
  const entry: ManifestBuild = { key: offered.key, time: offered.time, url: cdn.url(offered.route), sha256: c.sha256 };
  cdn.set(manifestPath, { kind: 'json', body: manifestDoc([good, entry]) });
  return c;
}

/** A manifest served on a loopback CDN that lists each build once it is published, oldest first. */
export interface ManifestFeed {
  /** Where the manifest is served: the instance's `ManifestUrl`. */
  url: string;
  builds: ManifestBuild[];
  /** Serves `archive` at `route` and lists it in the manifest as build `key` of `time`, its hash the archive's. */
  publish(key: string, time: string, archive: BuiltArchive, route: string): void;
}

/** A ManifestFeed at `path` of `cdn`, listing nothing yet. */
export function manifestFeed(cdn: Cdn, path: string): ManifestFeed {
  const builds: ManifestBuild[] = [];
  cdn.set(path, { kind: 'json', body: manifestDoc(builds) });
  return {
    url: cdn.url(path),
    builds,
    publish(key, time, archive, route) {
      cdn.set(route, { kind: 'file', file: archive.path });
      builds.push({ key, time, url: cdn.url(route), sha256: archive.sha256 });
      cdn.set(path, { kind: 'json', body: manifestDoc(builds) });
    },
  };
}
