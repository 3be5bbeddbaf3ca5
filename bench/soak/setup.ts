import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH, freePorts } from '../lib/env.ts';
import { type Build, makeBuild } from './builds.ts';
import { type SoakCdn, startCdn } from './cdn.ts';
import { INSTANCE_FS_BYTES, type SoakInstance } from './config.ts';
import { type SmallFs, tryMountSmallFs } from './smallfs.ts';
import { type SoakWebhook, startWebhook } from './webhook.ts';
import type { World } from './world.ts';

/** The soak's folder, servers, builds, CDN, webhook and configuration, before the first daemon starts. */

/** How many instances of each kind a run configures, and their TimeoutSeconds. */
export interface Shape {
  plain: number;
  /** Installing their builds from the loopback CDN (UpdateType: Manifest). */
  manifest: number;
  /** Configured later by a reload. */
  spares: number;
  /** It also bounds the first check-in. */
  timeoutSeconds: number;
  /** The instance root on a small tmpfs of its own (the disk-full fault's disk). */
  smallFs: boolean;
}

/** The soak: 30 servers; 8 s is long enough for them to start at once on a loaded two-core machine. */
export const FULL: Shape = { plain: 26, manifest: 4, spares: 4, timeoutSeconds: 8, smallFs: true };

/**
 * The smoke (`--smoke`, in `npm test`): five plain servers. 5 s still covers five first check-ins on a busy two-core
 * machine, and makes the frozen server's kill come within the smoke's time.
 */
export const SMOKE: Shape = { plain: 5, manifest: 0, spares: 0, timeoutSeconds: 5, smallFs: false };

export interface Setup {
  world: World;
  cdn: SoakCdn;
  hook: SoakWebhook;
  /** Builds not published yet (the first is, at start). */
  pending: Build[];
  /** Content fingerprints of every build: what bin/ may hold. */
  known: Set<string>;
  /** The tmpfs the instance root lives on (the disk-full fault's disk), or why it could not be mounted. */
  fs: SmallFs | null;
  fsSkipped: string | null;
}

export async function setUp(dir: string, run: string, lifetimeMs: number, shape: Shape = FULL): Promise<Setup> {
  mkdirSync(join(dir, 'modes'), { recursive: true });
  mkdirSync(join(dir, 'secrets'), { recursive: true });
  // The daemon runs RunCommand as a program: the server gets an absolute shebang to this Node.
  const source = readFileSync(join(BENCH, 'soak/server.mjs'), 'utf8').replace(/^#!.*\n/, `#!${process.execPath}\n`);
  const script = join(dir, 'server.mjs');
  writeFileSync(script, source);
  chmodSync(script, 0o755);
  // Without Manifest instances nothing installs a build: none is made.
  const labels = shape.manifest > 0 ? ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'] : [];
  const builds = labels.map((label, i) => makeBuild(dir, label, i, script));
  const cdn = await startCdn();
  if (builds[0]) cdn.builds.push(builds[0]);
  const hook = await startWebhook();
  const [daemonPort, ...ports] = await freePorts(1 + shape.plain + shape.manifest + shape.spares);
  const port = () => {
    const p = ports.shift();
    if (p === undefined || daemonPort === undefined) throw new Error('out of ports');
    return p;
  };
  const inst = (key: string, manifest: boolean): SoakInstance => ({
    key,
    port: port(),
    timeoutSeconds: shape.timeoutSeconds,
    manifest,
  });
  const instances = [
    ...Array.from({ length: shape.manifest }, (_, i) => inst(`m${i}`, true)),
    ...Array.from({ length: shape.plain }, (_, i) => inst(`p${String(i).padStart(2, '0')}`, false)),
  ];
  const spares = Array.from({ length: shape.spares }, (_, i) => inst(`x${i}`, false));
  const world: World = {
    config: {
      daemonPort: daemonPort ?? 0,
      persist: false,
      run,
      dir,
      script,
      manifestUrl: `${cdn.origin}/manifest`,
      webhookUrl: hook.url,
      lifetimeMs,
      instances,
    },
    daemon: null,
    spares,
    starts: 0,
  };
  // The instance root on a small disk of its own, mounted before any daemon writes there.
  const mounted = shape.smallFs
    ? tryMountSmallFs(join(dir, 'instances'), INSTANCE_FS_BYTES)
    : 'not asked for (no disk-full fault in this run)';
  return {
    world,
    cdn,
    hook,
    pending: builds.slice(1),
    known: new Set(builds.map((b) => b.fingerprint)),
    fs: typeof mounted === 'string' ? null : mounted,
    fsSkipped: typeof mounted === 'string' ? mounted : null,
  };
}
