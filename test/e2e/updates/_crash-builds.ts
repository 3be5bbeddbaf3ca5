/** The two builds the daemon-killed-mid-update suites install (crash.test.ts, crash-persist.test.ts). Not a test file. */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir, waitFor } from '../../_support/env.ts';
import type { EntrySpec } from '../../fixtures/archives/build.ts';
import { startCdn, type Cdn } from '../../fixtures/archives/serve.ts';
import { manifestDoc, writeServerBuild, type BuiltArchive, type ManifestBuild } from '../../fixtures/builds/build.ts';

export interface CrashBuilds {
  /** The temporary folder everything lives in; `cleanup` removes it. */
  root: string;
  cleanup: () => Promise<void>;
  cdn: Cdn;
  a: ManifestBuild;
  b: BuiltArchive;
  bBuild: ManifestBuild;
}

/**
 * A temporary folder and a loopback CDN with build A served and published in the manifest at `manifestPath`, and
 * build B written and described but neither served nor published (each test serves it its own way). B holds
 * thousands of small entries, so that its extraction lasts long enough to be caught in the act.
 */
export async function crashBuilds(prefix: string, manifestPath: string): Promise<CrashBuilds> {
  const { path: root, cleanup } = await tempDir(prefix);
  const cdn = await startCdn();
  const a = await writeServerBuild(join(root, 'files', 'A.zip'), 'A');
  const many: EntrySpec[] = [];
  for (let i = 0; i < 4000; i++) many.push({ name: `Resources/f${i % 40}/file${i}.txt`, content: `file ${i}` });
  const b = await writeServerBuild(join(root, 'files', 'B.zip'), 'B', { extra: many });
  cdn.set('/files/A.zip', { kind: 'file', file: a.path });
  const aBuild = { key: 'build-A', time: '2024-05-01T10:00:00Z', url: cdn.url('/files/A.zip'), sha256: a.sha256 };
  cdn.set(manifestPath, { kind: 'json', body: manifestDoc([aBuild]) });
  const bBuild = { key: 'build-B', time: '2024-05-02T10:00:00Z', url: cdn.url('/files/B.zip'), sha256: b.sha256 };
  return { root, cleanup, cdn, a: aBuild, b, bBuild };
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
