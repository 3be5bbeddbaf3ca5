/**
 * A scratch folder on a journalled ext4 file system, for benchmarks that create and delete thousands of files.
 *
 * Why: ext4 without a journal (this machine's root file system) will not reuse an inode deleted in the last
 * minute or more, and checks each free inode it passes as it allocates one (`perf record` of a loop creating
 * files: 40 % of the time in `recently_deleted` under `__ext4_new_inode`). A file then costs 300–700 µs to create
 * instead of ~20 µs, depending on how much was deleted in the minutes before, which every update run does: the
 * figures swung 1.8–5 s for the same run. A journalled ext4 (what a server runs) has no such check. Where the
 * temp folder's file system has a journal, or one cannot be made (no root, no loop device, no mkfs.ext4), the
 * scratch folder is a plain temp folder, and `fs` says which.
 */
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type TempDir, tempDir } from './env.ts';

const run = promisify(execFile);

/** Large enough that the daemon streams a 200 MB build (it wants room for 20× the download) and keeps two. */
const IMAGE_BYTES = 12 * 1024 ** 3;

export interface Scratch extends TempDir {
  /** The file system the scratch folder is on, for the report. */
  fs: string;
}

/** The ext4 device name (`vda`, `loop0`) holding `path`, and whether it journals; null when not ext4. */
async function ext4Of(path: string): Promise<{ device: string; journal: boolean } | null> {
  const { stdout } = await run('findmnt', ['-n', '-o', 'SOURCE,FSTYPE', '-T', path]);
  const [source, type] = stdout.trim().split(/\s+/);
  if (type !== 'ext4' || !source) return null;
  const device = source.replace(/^\/dev\//, '');
  const task = await readFile(`/sys/fs/ext4/${device}/journal_task`, 'utf8').catch(() => '');
  return { device, journal: task.trim() !== '<none>' && task.trim() !== '' };
}

export async function journaledScratch(prefix: string): Promise<Scratch> {
  const tmp = await tempDir(prefix);
  const here = await ext4Of(tmp.path).catch(() => null);
  if (!here || here.journal) return { ...tmp, fs: here ? `ext4 with a journal (${here.device})` : 'the temp folder' };
  const image = join(tmp.path, 'fs.img');
  const mount = join(tmp.path, 'mnt');
  let loop = '';
  try {
    await run('truncate', ['-s', String(IMAGE_BYTES), image]);
    await run('mkfs.ext4', ['-q', '-F', image]);
    await run('mkdir', [mount]);
    // Direct I/O to the image: its pages are not cached twice, and a flush goes through to the disk as on a real one.
    const { stdout } = await run('losetup', ['--find', '--show', '--direct-io=on', image]);
    loop = stdout.trim();
    await run('mount', [loop, mount]);
  } catch (err) {
    if (loop) await run('losetup', ['-d', loop]).catch(() => undefined);
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return { ...tmp, fs: `ext4 without a journal (${here.device}): a journalled one could not be mounted (${why})` };
  }
  return {
    path: mount,
    fs: `a journalled ext4 in a ${IMAGE_BYTES / 1024 ** 3} GB image on a loop device (direct I/O) (the temp folder's ext4, ${here.device}, has no journal)`,
    cleanup: async () => {
      await run('umount', [mount]).catch(() => run('umount', ['-l', mount]));
      await run('losetup', ['-d', loop]).catch(() => undefined);
      await rm(tmp.path, { recursive: true, force: true });
    },
  };
}
