/**
 * What both image suites give a container of the image (test/dist/image.test.ts runs its process on this
 * machine, test/image/ in a buildah container): the two folders it mounts, an appsettings.yml with the demo
 * server as instance `main`, and the wait for that server to run.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './env.ts';

export interface ImageFolders {
  /** The temp folder holding both; remove it when done. */
  root: string;
  /** Mounted at /config. */
  config: string;
  /** Mounted at /data. */
  data: string;
}

export async function imageFolders(prefix: string): Promise<ImageFolders> {
  const root = await mkdtemp(join(tmpdir(), prefix));
  const config = join(root, 'config');
  const data = join(root, 'data');
  await mkdir(config);
  await mkdir(data);
  return { root, config, data };
}

/**
 * config/appsettings.yml: the daemon at `daemonPort` on the loopback, the demo server (`runCommand`, as the
 * container sees it) as instance `main` on `gamePort`. No ApiToken: each suite gives it its own way.
 */
export async function writeDemoSettings(
  config: string,
  o: { daemonPort: number; gamePort: number; runCommand: string },
): Promise<void> {
  const lines = [
    `BaseUrl: http://127.0.0.1:${o.daemonPort}/`,
    'Servers:',
    '  Instances:',
    '    main:',
    `      ApiPort: ${o.gamePort}`,
    '      UpdateType: Dummy',
    `      RunCommand: ${o.runCommand}`,
    `      Arguments: ["--cvar", "net.port=${o.gamePort}"]`,
    '      TimeoutSeconds: 30',
    '',
  ];
  await writeFile(join(config, 'appsettings.yml'), lines.join('\n'));
}

/** Instance `main` running, by its status with its token; its pid. Bounded by `timeoutMs`. */
export async function demoRunning(base: string, token: string, timeoutMs: number): Promise<{ pid: number }> {
  const auth = { authorization: `Basic ${Buffer.from(`main:${token}`).toString('base64')}` };
  return waitFor(
    'the demo server running',
    async () => {
      const res = await fetch(`${base}/instances/main/status`, { headers: auth });
      const body = (await res.json()) as { state?: string; pid?: number };
      return body.state === 'server.running' && body.pid ? { pid: body.pid } : undefined;
    },
    timeoutMs,
    100,
  );
}
