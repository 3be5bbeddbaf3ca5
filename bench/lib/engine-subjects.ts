/**
 * The real engine (Robust.Server) under a watchdog, seen the same way whichever watchdog it is: our daemon or the
 * real SS14.Watchdog. Each gives the engine's pid, the last check-in it took, when it logged a launch, and the
 * control API (`POST /instances/<key>/<action>`, Basic `<key>:<token>`), so bench/engine.ts measures both alike.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { engineConfigToml } from '../peers/robust-engine/bundle.ts';
import { type BenchDaemon, control, instanceStatus, startDaemon } from './daemon.ts';
import { readEnvironVar } from './proc.ts';
import { childPids, PEER_NAME, type Peer, startPeer } from './ss14.ts';
import { waitFor } from './wait.ts';

export const ENGINE_TOKEN = 'bench-token';

export interface EngineInstance {
  key: string;
  statusPort: number;
  gamePort: number;
  /** Absolute, or relative to the instance folder (`bin/…` for a build the update provider installs). */
  runCommand: string;
  timeoutSeconds: number;
  /** Manifest URL of a loopback CDN: the instance updates from it (`UpdateType: Manifest`). */
  manifestUrl?: string;
}

export interface EngineSubject {
  name: string;
  /** The instance folder (`<cwd>/instances/<key>`, the same layout for both watchdogs). */
  instanceDir: string;
  statusPort: number;
  /** The engine's pid now, or null when there is none. */
  enginePid(): Promise<number | null>;
  /** Wall time (ms) of the newest check-in the watchdog took, or null before the first. */
  lastCheckin(): Promise<number | null>;
  /** Wall time at which the watchdog's first launch line after `since` reached the bench, or null. */
  launchedAfter(since: number): number | null;
  control(action: 'restart' | 'update'): Promise<number>;
  /** Resolves once the watchdog has taken in a found update `revision` and told the engine (`POST /update`). */
  updateNoticed(revision: string, since: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** Writes the instance folder both watchdogs expect: `instances/<key>/config.toml` under the working folder. */
async function prepareInstance(cwd: string, i: EngineInstance): Promise<string> {
  const dir = join(cwd, 'instances', i.key);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.toml'), engineConfigToml({ statusPort: i.statusPort, gamePort: i.gamePort }));
  return dir;
}

const lineAfter = (lines: ReadonlyArray<{ line: string; at: number }>, re: RegExp, since: number): number | null =>
  lines.find((l) => l.at >= since && re.test(l.line))?.at ?? null;

/** Our daemon (`bin/watchdog start`) with one engine instance; the crash back-off as `timing` sets it. */
export async function oursWithEngine(cwd: string, i: EngineInstance, timing: string[]): Promise<EngineSubject> {
  const instanceDir = await prepareInstance(cwd, i);
  const yaml = [
    'Urls: http://127.0.0.1:0',
    ...(timing.length ? ['Timing:', ...timing.map((t) => `  ${t}`)] : []),
    'Servers:',
    '  Instances:',
    `    ${i.key}:`,
    `      ApiToken: ${ENGINE_TOKEN}`,
    `      ApiPort: ${i.statusPort}`,
    `      RunCommand: ${JSON.stringify(i.runCommand)}`,
    `      TimeoutSeconds: ${i.timeoutSeconds}`,
    '      DumpOnTimeout: false',
    ...(i.manifestUrl ? ['      UpdateType: Manifest', '      Updates:', `        ManifestUrl: ${i.manifestUrl}`] : []),
    '',
  ].join('\n');
  const daemon: BenchDaemon = await startDaemon(cwd, yaml);
  const status = () => instanceStatus(daemon.url, i.key, ENGINE_TOKEN);
  return {
    name: 'ours',
    instanceDir,
    statusPort: i.statusPort,
    enginePid: async () => (await status()).pid,
    lastCheckin: async () => {
      const at = (await status()).lastCheckinAt;
      return at ? Date.parse(at) : null;
    },
    launchedAfter: (since) => lineAfter(daemon.lines(), /server launched/, since),
    control: (action) => control(daemon.url, i.key, ENGINE_TOKEN, action),
    async updateNoticed(revision, _since, timeoutMs) {
      // Staged (downloaded, verified, unpacked) and the engine asked to leave at its round end.
      await waitFor(
        `our daemon to stage ${revision} and ask the engine to leave`,
        async () => {
          const s = (await status()) as unknown as {
            maintenance?: { staged: string | null; pending: { waitingFor: string } | null };
          };
          return s.maintenance?.staged === revision && s.maintenance.pending?.waitingFor === 'round-end';
        },
        timeoutMs,
        50,
      );
    },
    stop: async () => {
      await daemon.stop();
    },
  };
}

/** The namespace of the real watchdog's per-instance logger: pings, launches and commands at Trace/Debug. */
const PEER_INSTANCE_LOGS = 'SS14.Watchdog.Components.ServerManagement';

/** The real SS14.Watchdog with one engine instance, its instance logger at Verbose (pings and launches are Trace/Debug). */
export async function realWithEngine(
  exe: string,
  cwd: string,
  port: number,
  i: EngineInstance,
): Promise<EngineSubject> {
  const instanceDir = await prepareInstance(cwd, i);
  const peer: Peer = await startPeer(
    exe,
    cwd,
    port,
    [
      {
        key: i.key,
        token: ENGINE_TOKEN,
        apiPort: i.statusPort,
        runCommand: i.runCommand,
        arguments: [],
        timeoutSeconds: i.timeoutSeconds,
        extra: i.manifestUrl ? ['UpdateType: Manifest', 'Updates:', `  ManifestUrl: ${i.manifestUrl}`] : [],
      },
    ],
    { log: { verbose: [PEER_INSTANCE_LOGS] } },
  );
  const engine = (): number | null =>
    childPids(peer.pid).find((pid) => readEnvironVar(pid, 'ROBUST_CVAR_watchdog__token') !== null) ?? null;
  return {
    name: PEER_NAME,
    instanceDir,
    statusPort: i.statusPort,
    enginePid: async () => engine(),
    lastCheckin: async () => peer.lines().findLast((l) => /Received ping from server/.test(l.line))?.at ?? null,
    launchedAfter: (since) => lineAfter(peer.lines(), /Launched!/, since),
    control: (action) => control(peer.url, i.key, ENGINE_TOKEN, action),
    async updateNoticed(_revision, since, timeoutMs) {
      // It keeps the update for the next start and tells the engine (POST /update), which acknowledges and stays.
      await waitFor(
        `${PEER_NAME} to send the engine its update notification`,
        () => lineAfter(peer.lines(), /sending update notification/, since),
        timeoutMs,
        50,
      );
    },
    stop: () => peer.stop(),
  };
}
