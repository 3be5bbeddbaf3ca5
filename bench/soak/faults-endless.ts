import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signal } from '../lib/proc.ts';
import { sleep } from '../lib/wait.ts';
import { fingerprint } from './builds.ts';
import type { SoakCdn } from './cdn.ts';
import { ENDLESS_DOWNLOAD_CEILING_MB, ENDLESS_HUB_MS } from './config.ts';
import type { SoakContext } from './context.ts';
import { control } from './faults-control.ts';
import { pickLive } from './faults-env.ts';
import { watchRecovery } from './recovery.ts';
import { check, countFault } from './state.ts';
import { daemonLogLine, daemonLogSince, daemonLogSize, unharmedWhile } from './unharmed.ts';

/**
 * Answers without end (issue 40) from the soak's loopback CDN: a hub the server's own config.toml names, and an
 * update archive of unknown length. The daemon must read each only up to its cap, its RSS within 100 MB of its
 * figure before, and an endless download must fail the update at its ceiling, the part file removed, the installed
 * build kept.
 */

const MB = 1024 * 1024;
/** An answer cut off at its cap has sent that plus what the kernel's socket buffers took: a few MB, not hundreds. */
const CUT_OFF_BELOW = 32 * MB;

/**
 * Writes a plain running server a config.toml that advertises to the CDN's hub route, answering without end, and
 * kills the server: its relaunch starts a hub watch that asks the hub every 2 s for ENDLESS_HUB_MS. Null when no
 * server was free.
 */
export function endlessHub(ctx: SoakContext, cdn: SoakCdn): Promise<void> | null {
  const { s } = ctx;
  const live = pickLive(ctx);
  if (!live || live.t.manifest) return null;
  const { t, pid } = live;
  const toml = join(s.dir, 'instances', t.key, 'config.toml');
  try {
    writeFileSync(
      toml,
      `[hub]\nadvertise = true\nserver_url = "ss14://127.0.0.1:${t.port}"\nhub_urls = "${cdn.origin}/hub/"\n`,
    );
  } catch {
    // The instance disk full (disk-full): tried again later.
    return null;
  }
  countFault(s, 'endless-hub', t.key);
  ctx.busy.add(t.key);
  cdn.hubEndless = true;
  const cutBefore = cdn.cutOff.hub.length;
  signal(pid, 'SIGKILL');
  s.log(`fault endless-hub on ${t.key} (was pid ${pid}): its relaunch watches a hub that answers without end`);
  watchRecovery(ctx, 'endless-hub', [t.key], Date.now() + ENDLESS_HUB_MS);
  const ready = s.daemonReadyAt;
  return (async () => {
    await unharmedWhile(ctx, 'endless-hub', ENDLESS_HUB_MS, { rss: true });
    cdn.hubEndless = false;
    // The watch goes on with this run (the hub now answers 404 at once); the next launch does not advertise.
    rmSync(toml, { force: true });
    const cut = cdn.cutOff.hub.slice(cutBefore);
    // A daemon killed by the plan meanwhile may not have watched the hub again before the fault ended.
    if (cut.length > 0 || s.daemonReadyAt === ready)
      check(
        s,
        'hostile-refused',
        cut.length > 0 && cut.every((b) => b < CUT_OFF_BELOW),
        () => `endless-hub: answers cut off after ${cut.join(', ') || 'none'} bytes (none is a watch that never asked)`,
      );
    ctx.busy.delete(t.key);
    s.log(`fault endless-hub ended on ${t.key}: ${cut.length} hub answers cut off after ${cut.join(', ')} bytes`);
  })();
}

let serial = 0;

/**
 * Publishes a build, newest of all, whose archive is endless and of unknown length, and asks a running Manifest
 * instance to update: the update must fail at its ceiling (Updates.MaxUnpackedMegabytes, or less free space), the part file
 * be removed and bin/ hold the build it had. False when no Manifest instance was free or the CDN is down.
 */
export async function endlessCdn(ctx: SoakContext, cdn: SoakCdn): Promise<boolean> {
  const { s } = ctx;
  // Any state but an update or a rollback under way (a Manifest instance is often installing, or starting what it
  // installed), and no request on it in the last seconds: a starved daemon may answer one late, and carry it out
  // beside this update.
  const free = [...s.tracks.values()].filter(
    (i) =>
      i.manifest &&
      i.configured &&
      !ctx.busy.has(i.key) &&
      !/^(updat|rolling)/.test(i.status?.state ?? 'updating') &&
      Date.now() - i.touchedAt > 15_000,
  );
  if (free.length === 0 || cdn.mode === 'down') return false;
  const t = ctx.rng.pick(free);
  const dir = join(s.dir, 'instances', t.key);
  const bin = fingerprint(join(dir, 'bin'));
  const name = `endless-${++serial}.zip`;
  cdn.endless = {
    key: `build-endless-${serial}`,
    time: '2030-01-01T00:00:00.000Z',
    file: '',
    name,
    sha256: 'f'.repeat(64),
  };
  countFault(s, 'endless-cdn', t.key);
  ctx.busy.add(t.key);
  const ready = s.daemonReadyAt;
  const from = daemonLogSize(s.dir);
  const cutBefore = cdn.cutOff.file.length;
  s.log(`fault endless-cdn on ${t.key}: ${name} is endless; update asked`);
  // The ceiling, or the free space less the margin where a disk-full fault left less than that (the same refusal).
  const reason = new RegExp(`^(?=.*\\b${t.key}\\b)(?=.*the download of unknown length passed [\\d.]+ (bytes|[kM]?B))`);
  let failed: string | null = null;
  const asked = (await control(s, t.key, 'update')) === 200;
  if (asked) {
    const line = daemonLogLine(s.dir, from, reason, 20_000).then((l) => {
      failed = l;
    });
    await Promise.all([line, unharmedWhile(ctx, 'endless-cdn', 20_000, { rss: true, until: () => failed !== null })]);
  }
  cdn.endless = null;
  const part = join(dir, '.update', 'download.part');
  // The part file goes as the failure is handled: a moment after the line (bounded: 5 s).
  for (let i = 0; i < 20 && existsSync(part); i++) await sleep(250);
  const cut = cdn.cutOff.file.slice(cutBefore);
  // A daemon killed by the plan meanwhile took the update with it; an update refused (409: one under way) is none.
  if (asked && s.daemonReadyAt === ready) {
    // A rollback or another build installed meanwhile (a request the daemon answered late) changes bin/ rightly.
    const swapped = new RegExp(`\\b${t.key}\\b.*(rolled back to|moving the new build into bin/)`);
    const after = daemonLogSince(s.dir, from).some((l) => swapped.test(l)) ? bin : fingerprint(join(dir, 'bin'));
    const problems = [
      failed === null ? 'no update failed at its ceiling within 20 s' : '',
      existsSync(part) ? `${part} left behind` : '',
      after !== bin ? 'bin/ changed' : '',
      cut.some((b) => b > ENDLESS_DOWNLOAD_CEILING_MB * MB + CUT_OFF_BELOW)
        ? `the CDN sent ${cut.join(', ')} bytes`
        : '',
    ].filter(Boolean);
    check(s, 'hostile-refused', problems.length === 0, () => `endless-cdn on ${t.key}: ${problems.join('; ')}`);
  }
  ctx.busy.delete(t.key);
  s.log(
    `fault endless-cdn ended on ${t.key}: ${failed ?? 'no failure logged'}; CDN cut off after ${cut.join(', ')} bytes`,
  );
  return true;
}
