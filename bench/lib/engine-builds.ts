/**
 * Builds of the real engine for the update benchmarks: the unpacked bundle as a zip (the one archive format both
 * watchdogs' Manifest providers take), plus a `build.txt` naming each build so the bench can tell which one runs,
 * and a manifest per watchdog (`manifest-<who>.json`) in the CDN's folder.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hostRid } from '../../src/updates/platform.ts';
import { fileSize, sha256File } from './build-gen.ts';

const run = promisify(execFile);

export interface EngineBuilds {
  /** The folder to serve: the zips and the manifests. */
  folder: string;
  zipMiB: number;
  /** Publishes a new build in `manifest-<who>.json` (absolute URLs under `cdnUrl`); returns its key. */
  publish(who: string, cdnUrl: string): Promise<string>;
}

export async function engineBuilds(bundleDir: string, folder: string): Promise<EngineBuilds> {
  await mkdir(join(folder, 'scratch'), { recursive: true });
  const base = join(folder, 'engine-base.zip');
  await run('zip', ['-q', '-r', '-X', base, '.'], { cwd: bundleDir, maxBuffer: 1 << 20 });
  let count = 0;
  return {
    folder,
    zipMiB: (await fileSize(base)) / (1 << 20),
    async publish(who, cdnUrl) {
      const n = ++count;
      const key = `${who}-b${n}`;
      const file = `build-${key}.zip`;
      await copyFile(base, join(folder, file));
      await writeFile(join(folder, 'scratch', 'build.txt'), `${key}\n`);
      await run('zip', ['-q', '-j', join(folder, file), join(folder, 'scratch', 'build.txt')]);
      const doc = {
        builds: {
          [key]: {
            // Both providers take the newest build by time: each a minute after the last.
            time: new Date(Date.UTC(2030, 0, 1, 0, n)).toISOString(),
            server: { [hostRid()]: { url: `${cdnUrl}/${file}`, sha256: await sha256File(join(folder, file)) } },
          },
        },
      };
      await writeFile(join(folder, `manifest-${who}.json`), JSON.stringify(doc));
      return key;
    },
  };
}
