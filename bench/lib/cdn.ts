/**
 * The loopback CDN of the update benchmarks: bench/servers/static-server.mjs serving one folder, and a
 * manifest.json in it that names one build at a time (what `UpdateType: Manifest` reads).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostRid } from '../../src/updates/platform.ts';
import { BENCH } from './env.ts';
import { signal } from './proc.ts';
import { waitFor } from './wait.ts';

export interface BenchCdn {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  manifestUrl: string;
  /** Writes manifest.json naming one new build (`b1`, `b2`, …, each newer than the last) whose server archive for this host is `file` (relative to the folder); returns its key. */
  publish(file: string, sha256: string): Promise<string>;
  stop(): void;
}

/** The instance lines (`instanceExtra` of lightConfig) that make an instance update from `cdn`. */
export const manifestInstance = (cdn: BenchCdn): string[] => [
  'UpdateType: Manifest',
  'Updates:',
  `  ManifestUrl: ${cdn.manifestUrl}`,
  '  DownloadTimeoutSeconds: 300',
];

export async function startCdn(folder: string): Promise<BenchCdn> {
  const proc: ChildProcess = spawn(process.execPath, [join(BENCH, 'servers/static-server.mjs'), folder], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = () => {
    if (proc.pid) signal(proc.pid, 'SIGTERM');
  };
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  let port: string;
  try {
    port = await waitFor('the static server', () => /listening (\d+)/.exec(out)?.[1], 15_000);
  } catch (err) {
    stop();
    throw err;
  }
  const url = `http://127.0.0.1:${port}`;
  const rid = hostRid();
  let builds = 0;
  return {
    url,
    manifestUrl: `${url}/manifest.json`,
    async publish(file, sha256) {
      const key = `b${++builds}`;
      // The provider installs the newest build by time: each one a minute after the last.
      const doc = {
        builds: {
          [key]: {
            time: new Date(Date.UTC(2030, 0, 1, 0, builds)).toISOString(),
            server: { [rid]: { url: file, sha256 } },
          },
        },
      };
      await writeFile(join(folder, 'manifest.json'), JSON.stringify(doc));
      return key;
    },
    stop,
  };
}
