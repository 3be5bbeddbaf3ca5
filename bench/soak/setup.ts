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

export const PLAIN = 26;
export const MANIFEST = 4;
export const SPARES = 4;
/** Long enough for 30 Node servers to start at once on a loaded two-core machine (it also bounds the first check-in). */
const TIMEOUT_SECONDS = 8;

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

export async function setUp(dir: string, run: string, lifetimeMs: number): Promise<Setup> {
  mkdirSync(join(dir, 'modes'), { recursive: true });
  mkdirSync(join(dir, 'secrets'), { recursive: true });
  // The daemon runs RunCommand as a program: the server gets an absolute shebang to this Node.
  const source = readFileSync(join(BENCH, 'soak/server.mjs'), 'utf8').replace(/^#!.*\n/, `#!${process.execPath}\n`);
  const script = join(dir, 'server.mjs');
  writeFileSync(script, source);
  chmodSync(script, 0o755);
  const builds = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'].map((label, i) => makeBuild(dir, label, i, script));
  const cdn = await startCdn();
  cdn.builds.push(builds[0] as Build);
  const hook = await startWebhook();
  const [daemonPort, ...ports] = await freePorts(1 + PLAIN + MANIFEST + SPARES);
  const port = () => {
    const p = ports.shift();
    if (p === undefined || daemonPort === undefined) throw new Error('out of ports');
    return p;
  };
  const inst = (key: string, manifest: boolean): SoakInstance => ({
    key,
    port: port(),
    timeoutSeconds: TIMEOUT_SECONDS,
    manifest,
  });
  const instances = [
    ...Array.from({ length: MANIFEST }, (_, i) => inst(`m${i}`, true)),
    ...Array.from({ length: PLAIN }, (_, i) => inst(`p${String(i).padStart(2, '0')}`, false)),
  ];
  const spares = Array.from({ length: SPARES }, (_, i) => inst(`x${i}`, false));
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
  const mounted = tryMountSmallFs(join(dir, 'instances'), INSTANCE_FS_BYTES);
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
