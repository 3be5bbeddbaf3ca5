/** The two builds the daemon-killed-mid-update suites install (crash.test.ts, crash-persist.test.ts). Not a test file. */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, tempDir, waitFor } from '../../../_support/env.ts';
import type { EntrySpec } from '../../../fixtures/archives/build.ts';
import { type Cdn, startCdn } from '../../../fixtures/archives/serve.ts';
import {
  type BuiltArchive,
  type ManifestBuild,
  manifestDoc,
  writeServerBuild,
} from '../../../fixtures/builds/build.ts';
import { manifestConfig, type UpdatesConfigOptions } from '../../_support/updates.ts';

export interface CrashBuilds {
  /** The temporary folder everything lives in; `cleanup` removes it. */
  root: string;
  cleanup: () => Promise<void>;
  cdn: Cdn;
  a: ManifestBuild;
  b: BuiltArchive;
  bBuild: ManifestBuild;
  /** The daemons' work folder (`<root>/wd`, made), the instance's ApiPort, and its appsettings.yml. */
  wd: string;
  port: number;
  yaml: string;
}

/**
 * A temporary folder and a loopback CDN with build A served and published in the manifest at `manifestPath`, and
 * build B written and described but neither served nor published (each test serves it its own way). B holds
 * thousands of small entries, so that its extraction lasts long enough to be caught in the act. The config has one
 * Manifest instance `key` reading that manifest (60 s download timeout), with `opts`.
 */
export async function crashBuilds(
  prefix: string,
  manifestPath: string,
  key: string,
  opts: UpdatesConfigOptions = {},
): Promise<CrashBuilds> {
  const { path: root, cleanup } = await tempDir(prefix);
  const cdn = await startCdn();
  const a = await writeServerBuild(join(root, 'files', 'A.zip'), 'A');
  const many: EntrySpec[] = [];
  // Stored, not deflated: yazl deflates each entry in a zlib stream of its own, 4 CPU-s for these 4,000.
  for (let i = 0; i < 4000; i++) {
    many.push({ name: `Resources/f${i % 40}/file${i}.txt`, content: `file ${i}`, store: true });
  }
  const b = await writeServerBuild(join(root, 'files', 'B.zip'), 'B', { extra: many });
  cdn.set('/files/A.zip', { kind: 'file', file: a.path });
  const aBuild = { key: 'build-A', time: '2024-05-01T10:00:00Z', url: cdn.url('/files/A.zip'), sha256: a.sha256 };
  cdn.set(manifestPath, { kind: 'json', body: manifestDoc([aBuild]) });
  const bBuild = { key: 'build-B', time: '2024-05-02T10:00:00Z', url: cdn.url('/files/B.zip'), sha256: b.sha256 };
  const wd = join(root, 'wd');
  await mkdir(wd);
  const port = await freePort();
  const yaml = manifestConfig(key, port, cdn.url(manifestPath), 60, opts);
  return { root, cleanup, cdn, a: aBuild, b, bBuild, wd, port, yaml };
}

/**
 * Waits until an extraction into `scratchDir` (the instance's `.update/`) is under way and returns its staging
 * folder's name: the download is removed only after the extraction, so a staging folder with files beside it
 * means the extraction is running.
 */
export function extractionUnderWay(scratchDir: string): Promise<string> {
  return waitFor(
    'a staging folder with extracted files',
    async () => {
      const names = await readdir(scratchDir);
      const staging = names.find((n) => n.startsWith('staging-'));
      if (!staging || !names.includes('download.part')) return undefined;
      const files = await readdir(join(scratchDir, staging, 'Resources')).catch(() => []);
      return files.length > 0 ? staging : undefined;
    },
    15_000,
    5,
  );
}
