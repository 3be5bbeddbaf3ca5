import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { signal } from '../lib/proc.ts';
import { sleep } from '../lib/wait.ts';
import { FIFO_CONFIG_MS, TOKEN } from './config.ts';
import type { SoakContext } from './context.ts';
import { pickLive } from './faults-env.ts';
import { watchRecovery } from './recovery.ts';
import { check, countFault } from './state.ts';
import { daemonLogLine, daemonLogSize, unharmedWhile } from './unharmed.ts';
import { reload, type World } from './world.ts';

/**
 * Named pipes where the daemon expects files (issue 40): an open of a FIFO waits for its other end, so a daemon
 * that opened one as a file froze, or parked a thread-pool thread for good. Each is now refused at once, naming the
 * file, and the daemon goes on answering, relaunching and reloading: the soak drops such pipes while servers run.
 */

const mkfifo = (path: string) => spawnSync('mkfifo', [path]).status === 0;

/**
 * A pipe as the configuration layer appsettings.Secret.yml and as a plain instance's config.toml (its hub watch
 * reads it at each launch: the server is killed so its relaunch meets the pipe), with a SIGHUP, for a few seconds.
 * Both must be refused and named in the log; once the pipes are gone, a reload (the soak's config-reload) must be
 * applied, and the instance must run again. Null when no server was free or mkfifo is missing.
 */
export function fifoConfig(ctx: SoakContext, w: World): Promise<void> | null {
  const { s, rng } = ctx;
  const live = pickLive(ctx);
  if (!live || live.t.manifest) return null;
  const { t, pid } = live;
  const secret = join(s.dir, 'appsettings.Secret.yml');
  const toml = join(s.dir, 'instances', t.key, 'config.toml');
  const from = daemonLogSize(s.dir);
  if (!mkfifo(secret)) return null;
  if (!mkfifo(toml)) {
    rmSync(secret, { force: true });
    return null;
  }
  const holdMs = rng.between(...FIFO_CONFIG_MS);
  countFault(s, 'fifo-config', t.key);
  ctx.busy.add(t.key);
  signal(pid, 'SIGKILL');
  if (s.daemonPid !== null) signal(s.daemonPid, 'SIGHUP');
  s.log(`fault fifo-config: appsettings.Secret.yml and ${t.key}'s config.toml are named pipes (was pid ${pid})`);
  watchRecovery(ctx, 'fifo-config', [t.key], Date.now() + holdMs + 30_000);
  const ready = s.daemonReadyAt;
  return (async () => {
    const refusals = [
      /appsettings\.Secret\.yml: cannot read the file \(it is not a regular file\)/,
      new RegExp(`^(?=.*cannot read the hub settings)(?=.*/${t.key}/config\\.toml is not a regular file)`),
    ];
    // A starved daemon may take many seconds to come to a SIGHUP: the refusal must come, not come at once.
    const seen = Promise.all(refusals.map((re) => daemonLogLine(s.dir, from, re, holdMs + 30_000)));
    await unharmedWhile(ctx, 'fifo-config', holdMs, { rss: false });
    const lines = await seen;
    rmSync(secret, { force: true });
    rmSync(toml, { force: true });
    // The plan does not kill the daemon meanwhile (daemonLoop waits for this fault): one started since saw nothing.
    if (s.daemonReadyAt !== ready) {
      ctx.busy.delete(t.key);
      return;
    }
    check(
      s,
      'hostile-refused',
      lines.every((l) => l !== null),
      () => `fifo-config: not refused in the log: ${refusals.filter((_, i) => lines[i] === null).join(', ')}`,
    );
    const before = daemonLogSize(s.dir);
    reload(ctx, w);
    const applied = await daemonLogLine(s.dir, before, /configuration reloaded \(/, 30_000);
    check(
      s,
      'hostile-refused',
      applied !== null || s.daemonReadyAt !== ready,
      () => 'fifo-config: no reload applied within 30 s after the pipes were gone',
    );
    ctx.busy.delete(t.key);
    s.log(`fault fifo-config ended: pipes removed; a reload ${applied === null ? 'NOT ' : ''}applied after`);
  })();
}

/** One GET of `path` with the instance's credentials on its own connection: the status and body (0: no answer). */
function get(url: string, key: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const auth = `Basic ${Buffer.from(`${key}:${TOKEN}`).toString('base64')}`;
    const req = request(`${url}${path}`, { agent: false, headers: { authorization: auth } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve({ status: 0, body }));
    });
    // A request parked on the pipe would never be answered: 20 s is far past a refusal's time, even from a daemon
    // the machine starves (it may wait seconds for a CPU).
    req.setTimeout(20_000, () => req.destroy(new Error('no answer within 20 s')));
    req.on('error', (err) => resolve({ status: 0, body: err.message }));
    req.end();
  });
}

/**
 * A pipe in a running server's shared data/replays, and six downloads of it at once (more than the thread pool's
 * four threads, which each would park in a blocking open): each must be refused (403, naming it); then the server
 * is killed, and must be relaunched and run again. Null when no server was free or mkfifo is missing.
 */
export function fifoShared(ctx: SoakContext): Promise<void> | null {
  const { s, rng } = ctx;
  const live = pickLive(ctx);
  if (!live) return null;
  const { t, pid } = live;
  const folder = join(s.dir, 'instances', t.key, 'data', 'replays');
  const pipe = join(folder, 'soak.pipe');
  try {
    mkdirSync(folder, { recursive: true });
    rmSync(pipe, { force: true });
  } catch {
    // The instance disk full (disk-full): tried again later.
    return null;
  }
  if (!mkfifo(pipe)) return null;
  const holdMs = rng.between(...FIFO_CONFIG_MS);
  countFault(s, 'fifo-shared', t.key);
  ctx.busy.add(t.key);
  s.log(`fault fifo-shared on ${t.key}: ${pipe} is a named pipe; six downloads of it`);
  watchRecovery(ctx, 'fifo-shared', [t.key], Date.now() + 20_000);
  const ready = s.daemonReadyAt;
  return (async () => {
    const asked = Date.now();
    const [answers] = await Promise.all([
      Promise.all(
        Array.from({ length: 6 }, () => get(s.daemonUrl, t.key, `/instances/${t.key}/files/data/replays/soak.pipe`)),
      ),
      unharmedWhile(ctx, 'fifo-shared', holdMs, { rss: false }),
    ]);
    const refused = (a: { status: number; body: string }) =>
      a.status === 403 && a.body.includes('data/replays/soak.pipe: not a regular file or folder');
    // A daemon killed by the plan, or out of descriptors on purpose, meanwhile loses answers for its own reasons.
    const excused = s.daemonReadyAt !== ready || s.starvedUntil > asked;
    const bad = answers.filter((a) => !refused(a));
    if (!excused)
      check(
        s,
        'hostile-refused',
        bad.length === 0,
        () => `fifo-shared: ${bad.map((a) => `${a.status} ${a.body.slice(0, 120)}`).join('; ')}`,
      );
    // The daemon must still relaunch: the relaunch is timed by the /proc scans (relaunch-within-bound).
    signal(pid, 'SIGKILL');
    await sleep(500);
    rmSync(pipe, { force: true });
    ctx.busy.delete(t.key);
    s.log(
      `fault fifo-shared ended on ${t.key}: ${answers.length - bad.length} of ${answers.length} downloads refused; server ${pid} killed`,
    );
  })();
}
