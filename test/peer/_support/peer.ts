/**
 * The real SS14.Watchdog as a test oracle: locating and building it
 * (bench/peers/ss14-watchdog/build.sh), running it in a folder, and the helpers the differential suites share.
 * Not a suite itself (no tests are registered here).
 *
 * Without `dotnet` on PATH or without the snapshot (`$SS14_WATCHDOG_SRC`, else `<repo>/../shared/peers/SS14.Watchdog`)
 * every peer suite registers its tests as skipped (`peerSuite`, `sidesSuite`), so the closing line counts them, and
 * one line says why (printed once per run, by this module).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { suite, type Test } from 'uvu';
import { reported, startDaemon } from '../../_support/daemon.ts';
import { freePort, ROOT, tempDir, waitFor } from '../../_support/env.ts';
import { alive as isAlive, killGroup as killPid } from '../../_support/procs.ts';
import { skippedSuite } from '../../_support/skip.ts';

export { isAlive, killPid };

/** The snapshot of the real watchdog's source that build.sh builds. */
export const PEER_SRC = process.env.SS14_WATCHDOG_SRC || resolve(ROOT, '..', 'shared/peers/SS14.Watchdog');
const BUILD_SH = join(ROOT, 'bench/peers/ss14-watchdog/build.sh');
const BUILD_BOUND_MS = 5 * 60_000;

function onPath(program: string): boolean {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      /* not here */
    }
  }
  return false;
}

function whyUnavailable(): string | null {
  if (!onPath('dotnet')) return 'no dotnet on PATH';
  if (!existsSync(join(PEER_SRC, 'SS14.Watchdog/SS14.Watchdog.csproj')))
    return `no SS14.Watchdog snapshot at ${PEER_SRC}`;
  return null;
}

/** Why the peer suites cannot run here, or null when they can. */
export const PEER_SKIP: string | null = whyUnavailable();
if (PEER_SKIP) console.log(`peer: skipped (${PEER_SKIP})`);

/** A uvu suite, or where the real watchdog cannot run here one whose tests are all registered as skipped. */
export function peerSuite<C extends object>(name: string, state: C): Test<C> {
  return PEER_SKIP ? skippedSuite<C>(name) : suite<C>(name, state);
}

let built: Promise<string> | null = null;

/** Builds the real watchdog once per run (build.sh caches across runs too); resolves to its apphost path. */
export function peerProgram(): Promise<string> {
  built ??= new Promise<string>((resolvePath, reject) => {
    execFile(
      'bash',
      [BUILD_SH, PEER_SRC],
      { timeout: BUILD_BOUND_MS, killSignal: 'SIGKILL', maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const path = stdout.trim().split('\n').pop() ?? '';
        if (err || !path || !existsSync(path))
          reject(new Error(`building the real watchdog failed: ${err?.message ?? 'no path printed'}\n${stderr}`));
        else resolvePath(path);
      },
    );
  });
  return built;
}

export interface RealWatchdog {
  dir: string;
  url: string;
  proc: ChildProcess;
  /** Everything it wrote (stdout and stderr) so far. */
  log(): string;
  /** SIGTERM, wait for the exit code; SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Starts the real watchdog with `dir` as its working directory (it reads `appsettings.yml` there) and waits until
 * `GET <url>/watchdog/padlock` answers 200. `url` must be what the file's `Urls` says.
 */
export async function startReal(dir: string, url: string, env: Record<string, string> = {}): Promise<RealWatchdog> {
  const program = await peerProgram();
  // The test's own environment must not choose the address or environment; `env` may.
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['ASPNETCORE_URLS', 'DOTNET_URLS', 'DOTNET_ENVIRONMENT', 'ASPNETCORE_ENVIRONMENT'])
    delete inherited[k];
  const childEnv: NodeJS.ProcessEnv = { ...inherited, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', ...env };
  const proc = spawn(program, [], { cwd: dir, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((r) =>
    proc.once('exit', (code) => {
      exitCode = code;
      r(code);
    }),
  );
  const handle: RealWatchdog = {
    dir,
    url,
    proc,
    log: () => out,
    async stop(graceMs = 15_000) {
      if (exitCode !== undefined) return exitCode;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  try {
    await waitFor(
      'the real watchdog to listen',
      async () => {
        if (exitCode !== undefined) throw new Error(`the real watchdog exited with ${exitCode}:\n${out}`);
        const res = await fetch(`${url}/watchdog/padlock`, { signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        return res.status === 200;
      },
      // Its start (database migrations, JIT) took over 30 s on a 2-core machine with a busy loop beside the suite.
      120_000,
      100,
    );
  } catch (err) {
    await handle.stop(2000);
    throw new Error(`${String(err)}\n--- real watchdog output ---\n${out}`);
  }
  return handle;
}

/** Serilog section both watchdogs accept; without one the real watchdog logs nothing. `SS14: Verbose` logs its pings. */
export const SERILOG = [
  'Serilog:',
  '  Using: [ "Serilog.Sinks.Console" ]',
  '  MinimumLevel:',
  '    Default: Information',
  '    Override: { SS14: Verbose, Microsoft: Warning, Microsoft.Hosting.Lifetime: Information }',
  '  WriteTo: [ { Name: Console } ]',
].join('\n');

export interface PeerInstance {
  key: string;
  port: number;
  /** Left out: the build an update provider installs. */
  runCommand?: string;
  timeoutSeconds: number;
  token?: string;
  env?: Record<string, string>;
  args?: string[];
  /** More of the instance's keys, as YAML lines (indented six). */
  lines?: string[];
}

/**
 * One appsettings.yml valid for both watchdogs (no keys of ours that the real one lacks, and the reverse). Without
 * `persist` the file has no `Process` section; `extra` are top-level YAML lines (e.g. a `Notification` section).
 */
export function peerConfig(opts: {
  urlsPort: number;
  persist?: boolean;
  extra?: string[];
  instances: PeerInstance[];
}): string {
  const lines = [
    SERILOG,
    `Urls: http://localhost:${opts.urlsPort}`,
    ...(opts.persist === undefined ? [] : ['Process:', `  PersistServers: ${opts.persist}`]),
    ...(opts.extra ?? []),
    'Servers:',
    '  Instances:',
  ];
  for (const i of opts.instances) {
    const args = ['--cvar', `net.port=${i.port}`, '--cvar', 'watchdog.checkin_interval=0.3', ...(i.args ?? [])];
    lines.push(
      `    ${i.key}:`,
      `      ApiToken: ${JSON.stringify(i.token ?? 't')}`,
      `      ApiPort: ${i.port}`,
      ...(i.runCommand === undefined ? [] : [`      RunCommand: ${JSON.stringify(i.runCommand)}`]),
      `      TimeoutSeconds: ${i.timeoutSeconds}`,
      '      DumpOnTimeout: false',
      ...(i.lines ?? []),
      `      Arguments: ${JSON.stringify(args)}`,
      `      EnvironmentVariables: ${JSON.stringify(i.env ?? {})}`,
    );
  }
  return lines.join('\n') + '\n';
}

/** Pids of live processes whose command line contains `needle` (e.g. an instance's config.toml path). */
export async function pidsWith(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    if (cmdline.includes(needle) && !/\) Z /.test(stat)) found.push(Number(name));
  }
  return found.sort((a, b) => a - b);
}

/** Prints one deliberate difference a test asserts (the suite's record of them). */
export function difference(text: string): void {
  console.log(`peer: deliberate difference: ${text}`);
}

export type SideName = 'real' | 'ours';

export interface RunningSide {
  name: SideName;
  dir: string;
  url: string;
  log(): string;
  /** SIGTERM and wait for the exit code (a second call returns at once). */
  stop(): Promise<number | null>;
}

/**
 * Writes `yaml` as `dir/appsettings.yml` and starts the real watchdog or ours there; `urlsPort` is the port of the
 * file's `Urls: http://localhost:<port>`.
 */
export async function startSide(
  name: SideName,
  dir: string,
  yaml: string,
  urlsPort: number,
  env: Record<string, string> = {},
): Promise<RunningSide> {
  const url = `http://localhost:${urlsPort}`;
  await writeFile(join(dir, 'appsettings.yml'), yaml);
  if (name === 'real') {
    const real = await startReal(dir, url, env);
    return { name, dir, url, log: real.log, stop: () => real.stop() };
  }
  const ours = await startDaemon(yaml, { dir, env });
  // It listens before its instances are prepared (requests for them get 503 meanwhile): wait until they are.
  await waitFor(
    'our instances to be registered',
    async () => {
      const health = await fetch(`${ours.url}/health`).then(
        (r) => r.json() as Promise<{ instances: Record<string, string> }>,
        () => null,
      );
      return health && Object.keys(health.instances).length > 0 ? true : undefined;
    },
    30_000,
  );
  return { name, dir, url, log: ours.log, stop: () => ours.stop() };
}

/** POST /instances/<key>/<action> (or any path) with a Basic header; the status code. */
export async function postAs(url: string, user: string | null, pass = ''): Promise<number> {
  const headers: Record<string, string> =
    user === null ? {} : { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` };
  const res = await fetch(url, { method: 'POST', headers, signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Writes a game server into `dir` (a `.mjs` under test/peer would be loaded by uvu as a suite) and returns the
 * path of its launcher, `behave.sh`, to use as RunCommand. The launcher appends `<epoch ms> <pid> <fork time in
 * clock ticks since boot>` to env `START_LOG` (from /proc/$$/stat, before Node starts, so a launch killed while
 * Node is still starting on a loaded machine is counted too), then execs Node on `behave.mjs` with the same pid.
 * `behave.mjs` speaks the engine's contract through test/fixtures/servers/_lib.mjs and behaves as env `MODE` says:
 * `well` (checks in, obeys /shutdown and /update), `silent` (API up, never checks in), `early` (exits 1 at once),
 * `crash` (checks in, exits 1 after `CRASH_MS`, first appending `<pid> <ms since boot>` to `<START_LOG>.exits`).
 * Past `MODE_LAUNCHES` launches (START_LOG lines) it behaves `well`: a bound on the load a crash loop makes.
 */
export async function writeBehave(dir: string): Promise<string> {
  const lib = pathToFileURL(join(ROOT, 'test/fixtures/servers/_lib.mjs')).href;
  const mjs = join(dir, 'behave.mjs');
  const sh = join(dir, 'behave.sh');
  await writeFile(
    mjs,
    `import { appendFileSync, readFileSync } from 'node:fs';
import { checkIn, parseLaunch, serveApi, startCheckins, startHousekeeping } from ${JSON.stringify(lib)};
const launches = process.env.START_LOG ? readFileSync(process.env.START_LOG, 'utf8').split('\\n').filter(Boolean).length : 0;
const mode = launches > Number(process.env.MODE_LAUNCHES ?? Infinity) ? 'well' : (process.env.MODE ?? 'well');
if (mode === 'early') process.exit(1);
const launch = parseLaunch();
startHousekeeping();
if (mode === 'well') startCheckins(launch);
const sinceBoot = () => Math.round(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000);
const crash = () => {
  if (process.env.START_LOG) appendFileSync(process.env.START_LOG + '.exits', process.pid + ' ' + sinceBoot() + '\\n');
  process.exit(1);
};
if (mode === 'crash') void checkIn(launch).then(() => setTimeout(crash, Number(process.env.CRASH_MS ?? 300)));
serveApi(launch, { onShutdown: () => process.exit(0), onUpdate: () => process.exit(0) });
setInterval(() => {}, 1 << 30);
`,
  );
  await writeFile(
    sh,
    `#!/bin/sh
if [ -n "$START_LOG" ]; then
  read -r stat < /proc/$$/stat
  ticks=$(printf '%s\\n' "\${stat##*) }" | cut -d' ' -f20)
  printf '%s %s %s\\n' "$(date +%s%3N)" "$$" "$ticks" >> "$START_LOG"
fi
exec ${JSON.stringify(process.execPath)} ${JSON.stringify(mjs)} "$@"
`,
  );
  await chmod(sh, 0o755);
  return sh;
}

/** Launches recorded by `writeBehave`'s launcher: `[epoch ms, pid, fork time in ms since boot]` each. */
export async function startsIn(file: string): Promise<Array<[number, number, number]>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [at, pid, ticks] = l.split(' ').map(Number) as [number, number, number];
      return [at, pid, ticks * (1000 / CLOCK_TICKS)];
    });
}

/** Crash exits recorded by `writeBehave`'s server: pid → ms since boot. */
export async function exitsIn(file: string): Promise<Map<number, number>> {
  const text = await readFile(`${file}.exits`, 'utf8').catch(() => '');
  return new Map(
    text
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ').map(Number) as [number, number]),
  );
}

/** USER_HZ: the unit of /proc/<pid>/stat times (100 on Linux but for exotic builds). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The status `state` of a running server: `running`, or a dotted path ending in it (the statechart may nest it). */
export const isRunningState = (state: string): boolean => state === 'server.running' || state.endsWith('.running');

/** Alive and not a zombie (a server whose watchdog died is re-parented, and may not be reaped at once). */
export async function isRunningPid(pid: number): Promise<boolean> {
  if (!isAlive(pid)) return false;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && !/\) Z /.test(stat);
}

/**
 * The start of a suite that runs both watchdogs in one folder in turn: the real one built, a temp folder, and two
 * free ports (`Urls`, and an instance's ApiPort).
 */
export async function peerFolder(
  prefix: string,
): Promise<{ dir: string; cleanup: () => Promise<void>; urlsPort: number; apiPort: number }> {
  await peerProgram();
  const tmp = await tempDir(prefix);
  return { dir: tmp.path, cleanup: tmp.cleanup, urlsPort: await freePort(), apiPort: await freePort() };
}

/** One side of a side-by-side suite: its watchdog, its folder, and what the suite keeps for it (`S`). */
export type Side<S> = S & { run: RunningSide; dir: string };
export interface SidesCtx<S> {
  sides: Partial<Record<SideName, Side<S>>>;
}

/**
 * A suite that runs the real watchdog and ours side by side, each in a temp folder of its own (`prefix` + name).
 * `before` runs first (fixtures both share); `side` writes a side's files and gives its appsettings.yml (`Urls` on
 * `urlsPort`), its environment and what the suite keeps for it. After the suite both are stopped, `after` runs, the
 * servers of the instances `keys` still running are killed, and the folders removed.
 */
export function sidesSuite<S extends object = Record<never, never>, C extends object = Record<never, never>>(
  title: string,
  opts: {
    prefix: string;
    keys: readonly string[];
    ctx?: C;
    before?: (ctx: C & SidesCtx<S>) => unknown;
    side: (
      name: SideName,
      dir: string,
      urlsPort: number,
      ctx: C & SidesCtx<S>,
    ) => Promise<{ yaml: string; env?: Record<string, string>; keep: S }>;
    after?: (ctx: C & SidesCtx<S>) => unknown;
  },
): Test<C & SidesCtx<S>> {
  if (PEER_SKIP) return skippedSuite(title);
  const s = suite<C & SidesCtx<S>>(title, { ...(opts.ctx as C), sides: {} });
  const dirs: Array<{ path: string; cleanup: () => Promise<void> }> = [];
  s.before(
    reported(async (ctx: C & SidesCtx<S>) => {
      await peerProgram();
      await opts.before?.(ctx);
      await Promise.all(
        (['real', 'ours'] as const).map(async (name) => {
          const dir = await tempDir(`${opts.prefix}${name}-`);
          dirs.push(dir);
          const urlsPort = await freePort();
          const { yaml, env, keep } = await opts.side(name, dir.path, urlsPort, ctx);
          const run = await startSide(name, dir.path, yaml, urlsPort, env);
          ctx.sides[name] = { ...keep, run, dir: dir.path };
        }),
      );
    }),
  );
  s.after(async (ctx) => {
    for (const side of Object.values(ctx.sides)) await side.run.stop();
    try {
      await opts.after?.(ctx);
    } finally {
      for (const dir of dirs) {
        for (const key of opts.keys)
          for (const pid of await pidsWith(join(dir.path, 'instances', key, 'config.toml'))) killPid(pid);
        await dir.cleanup();
      }
    }
  });
  return s;
}
