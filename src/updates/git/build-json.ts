import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UpdateError } from '../../errors.ts';

/**
 * `build.json` beside the server executable: the engine reads it when its status host starts and fills each `build.*`
 * cvar that is still empty from it (so anything the operator set in config.toml, the environment or `--cvar` wins).
 * The real watchdog writes one into the server archive of a non-hybrid Git build, and that is how such a server's
 * `/info` learns its version and fork id; ours writes the same keys into the staged build before it is swapped in.
 */
export interface BuildJson {
  /** Where launchers download the client zip. */
  download: string;
  /** SHA-256 of the client zip, upper-case hex. */
  hash: string;
  /** The build's version: the commit it was built from. */
  version: string;
  /** Left empty, as the real watchdog leaves it: the engine reports its own version. */
  engine_version: '';
  fork_id: string;
}

/** Writes `build.json` into `buildDir` (the staged `bin/`), replacing any the archive carried. */
export async function writeBuildJson(buildDir: string, build: BuildJson): Promise<void> {
  const path = join(buildDir, 'build.json');
  try {
    await writeFile(path, `${JSON.stringify(build)}\n`);
  } catch (err) {
    throw new UpdateError(`cannot write the build information ${path}; bin/ was left as it was`, { cause: err });
  }
}
