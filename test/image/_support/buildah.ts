/**
 * The few buildah commands the image suite runs, each bounded in time, and the image's configuration as buildah
 * stores it. Working containers are named by the suite so it removes only its own.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** buildah with its arguments; stdout trimmed. Fails with buildah's own stderr in the message. */
export async function buildah(args: string[], timeoutMs = 60_000): Promise<string> {
  try {
    const { stdout } = await run('buildah', args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim() ?? '';
    throw new Error(`buildah ${args.join(' ')} failed: ${stderr || (err as Error).message}`, { cause: err });
  }
}

/**
 * Why chroot builds cannot run here, or undefined when they can: buildah missing, not root (its storage and a
 * chroot need it), or its storage unusable (a scratch container cannot be made).
 */
export async function whyNoBuildah(): Promise<string | undefined> {
  try {
    await buildah(['--version'], 10_000);
  } catch {
    return 'buildah is not installed (apt-get install buildah)';
  }
  if (process.getuid?.() !== 0) return 'not root: buildah chroot builds need root';
  try {
    const probe = await buildah(['from', '--quiet', 'scratch'], 30_000);
    await buildah(['rm', probe], 30_000);
  } catch (err) {
    return `buildah cannot make a container here: ${(err as Error).message.split('\n')[0]}`;
  }
  return undefined;
}

/** What a container of the image starts with, as buildah committed it (docker format). */
export interface ImageConfig {
  User: string;
  Env: string[];
  Entrypoint: string[];
  Cmd: string[];
  WorkingDir: string;
  Healthcheck?: { Test: string[] };
}

export async function imageConfig(image: string): Promise<ImageConfig> {
  const json = JSON.parse(await buildah(['inspect', '--type', 'image', image])) as {
    Docker: { config: ImageConfig };
  };
  return json.Docker.config;
}

/** Removes working containers and an image, ignoring what is already gone (cleanup after a failed test). */
export async function removeQuietly(containers: string[], image?: string): Promise<void> {
  for (const ctr of containers) {
    await buildah(['umount', ctr]).catch(() => undefined);
    await buildah(['rm', ctr]).catch(() => undefined);
  }
  if (image) await buildah(['rmi', image]).catch(() => undefined);
}
