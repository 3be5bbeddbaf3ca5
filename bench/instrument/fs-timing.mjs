/**
 * File-system phase timer, loaded into the daemon under test with `node --import <this file> ...` (the daemon logs
 * no timings inside an install, and the bench must not change src/). It wraps node:fs/promises `rm`, `rename`,
 * `writeFile`, `unlink` and `rmdir` (and re-syncs the ES module bindings, so `import { rm } from 'node:fs/promises'` in src/ gets the
 * wrapper) and, for every call whose path lies under $BENCH_FS_TIMING_ROOT, writes one stderr line
 *   fs-timing <op> <start ms> <duration ms> <path>
 * (and `fsync <start> <duration> <root>/(any file)` for every FileHandle.sync, whose path is unknown)
 * with start in performance.timeOrigin + now (the clock of the bench servers' stamps). The daemon's stderr is read
 * line by line by bench/lib/daemon.ts, so the bench sees these next to the daemon's own log lines.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

const root = process.env.BENCH_FS_TIMING_ROOT;
if (root) {
  const require = createRequire(import.meta.url);
  const fsp = require('node:fs/promises');
  const now = () => performance.timeOrigin + performance.now();
  for (const op of ['rm', 'rename', 'writeFile', 'unlink', 'rmdir']) {
    const original = fsp[op];
    fsp[op] = async function timed(path, ...rest) {
      const p = String(path);
      if (!p.startsWith(root)) return original.call(this, path, ...rest);
      const t0 = now();
      try {
        return await original.call(this, path, ...rest);
      } finally {
        process.stderr.write(`fs-timing ${op} ${t0.toFixed(3)} ${(now() - t0).toFixed(3)} ${p}\n`);
      }
    };
  }
  syncBuiltinESMExports();
  // FileHandle.sync (fsync; data.json is written with one for the file and one for its folder) knows no path: every
  // call is reported as `<root>/(any file)`. The class is reached through a handle on /dev/null.
  const probe = await fsp.open('/dev/null', 'r');
  const proto = Object.getPrototypeOf(probe);
  await probe.close();
  const sync = proto.sync;
  proto.sync = async function timedSync() {
    const t0 = now();
    try {
      return await sync.call(this);
    } finally {
      process.stderr.write(`fs-timing fsync ${t0.toFixed(3)} ${(now() - t0).toFixed(3)} ${root}/(any file)\n`);
    }
  };
}
