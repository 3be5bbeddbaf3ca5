import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describeError } from '../errors.ts';

/** Sub-folders of every instance folder: the usual `binaries/`, `bin/` and `data/`, plus our `logs/` and `dumps/`. */
export const INSTANCE_SUBDIRS = ['binaries', 'bin', 'data', 'logs', 'dumps'] as const;

/** Creates the instance folder and its sub-folders; safe to call on every start. */
export async function prepareInstanceDir(dir: string): Promise<void> {
  try {
    for (const sub of INSTANCE_SUBDIRS) await mkdir(join(dir, sub), { recursive: true });
  } catch (err) {
    throw new Error(
      `could not create the instance folder ${dir} (${describeError(err)}); check that its parent is writable`,
      { cause: err },
    );
  }
}
