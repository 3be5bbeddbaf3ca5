/**
 * 5. Footprint: the daemon idling with one instance (the demo server), versus the floor, a bare Node process that
 * loads the same libraries and answers GET /health (bench/baselines/lib-floor.mjs). Launch → /health answering is
 * timed for both by polling every 5 ms; idle RSS is the median of 5 readings a few seconds after start. Trials
 * alternate floor, daemon; one uncounted warm-up pair first (tsx's transform cache, the page cache).
 *
 * Then the compiled daemon (`npm run build`, bin/watchdog with WATCHDOG_RUNTIME=dist, as the package and
 * the image run it) beside an idle PM2 daemon supervising the same demo server, in the same trials: idle RSS
 * (target ≤ PM2's daemon) and launch → /health (target ≤ 300 ms).
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { instanceKeys, lightConfig, TOKEN } from './lib/config.ts';
import { profileText, summarizeProfile } from './lib/cpu-profile.ts';
import { buildDist } from './lib/dist-build.ts';
import { BENCH, freePorts, ROOT, tempDir, WATCHDOG } from './lib/env.ts';
import { installServer } from './lib/launcher.ts';
import { type Pm2IdleTrial, pm2IdleTrial, privatePm2 } from './lib/pm2.ts';
import { isAlive, type MemoryReading, readMemory, signal } from './lib/proc.ts';
import { type Figure, figure, type Section } from './lib/report.ts';
import { childPids, getStatus, PEER_NAME, peerExe, peerYaml, skippedLine } from './lib/ss14.ts';
import { median } from './lib/stats.ts';
import { sleep, waitFor, wallNow } from './lib/wait.ts';

const MB = 1 << 20;
const SETTLE_MS = 4000;

/** One GET /health on a fresh connection; true on 200. */
function healthy(port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: 2000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(res.statusCode === 200 ? Buffer.concat(chunks).toString('utf8') : null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}

interface Trial {
  readyMs: number;
  rss: number;
  /** The RSS split, medians of the same readings: anonymous (V8's heap, malloc) and file-backed (node's own pages). */
  anon: number;
  file: number;
}

/** Spawns, times launch → /health 200, waits until `settled` says so, then takes the median of 5 RSS readings. */
async function trial(opts: {
  args: string[];
  cwd: string;
  env: Record<string, string>;
  port: number;
  settled: (body: string) => boolean;
  nodeArgs?: string[];
}): Promise<Trial> {
  const t0 = wallNow();
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...opts.args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: 'ignore',
  });
  const pid = proc.pid as number;
  try {
    const readyAt = await waitFor(
      '/health to answer',
      async () => ((await healthy(opts.port)) !== null ? wallNow() : null),
      30_000,
      5,
    );
    await waitFor(
      'the instance to run',
      async () => {
        const body = await healthy(opts.port);
        return body !== null && opts.settled(body);
      },
      60_000,
      100,
    );
    await sleep(SETTLE_MS);
    const readings: MemoryReading[] = [];
    for (let i = 0; i < 5; i++) {
      const m = readMemory(pid);
      if (m) readings.push(m);
      await sleep(200);
    }
    const med = (pick: (m: MemoryReading) => number) => median(readings.map(pick));
    return { readyMs: readyAt - t0, rss: med((m) => m.rss), anon: med((m) => m.anon), file: med((m) => m.file) };
  } finally {
    signal(pid, 'SIGTERM');
    const stopped = await waitFor('the process to exit', () => !isAlive(pid), 20_000, 20).catch(() => false);
    if (!stopped) signal(pid, 'SIGKILL');
  }
}

interface SupervisorTrial {
  readyMs: number;
  allLaunchedMs: number;
  rss: number;
}

/**
 * A supervisor with N idle light instances: spawn → its HTTP readiness path answers 200 (polled every 5 ms on fresh
 * connections) → N direct children → SETTLE_MS → median of 5 VmRSS readings of the supervisor process alone.
 */
async function supervisorTrial(opts: {
  cmd: string;
  args: string[];
  cwd: string;
  port: number;
  readyPath: string;
  n: number;
}): Promise<SupervisorTrial> {
  const t0 = wallNow();
  const proc = spawn(opts.cmd, opts.args, {
    cwd: opts.cwd,
    env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' },
    stdio: 'ignore',
  });
  const pid = proc.pid as number;
  try {
    const readyAt = await waitFor(
      `${opts.readyPath} to answer`,
      async () => ((await getStatus(opts.port, opts.readyPath)) === 200 ? wallNow() : null),
      60_000,
      5,
    );
    const launchedAt = await waitFor(
      `${opts.n} servers`,
      () => (childPids(pid).length >= opts.n ? wallNow() : null),
      60_000,
      10,
    );
    await sleep(SETTLE_MS);
    const readings: number[] = [];
    for (let i = 0; i < 5; i++) {
      const m = readMemory(pid);
      if (m) readings.push(m.rss);
      await sleep(200);
    }
    return { readyMs: readyAt - t0, allLaunchedMs: launchedAt - t0, rss: median(readings) };
  } finally {
    const kids = childPids(pid);
    signal(pid, 'SIGTERM');
    const stopped = await waitFor('the process to exit', () => !isAlive(pid), 20_000, 20).catch(() => false);
    if (!stopped) signal(pid, 'SIGKILL');
    for (const k of kids) if (isAlive(k)) signal(k, 'SIGKILL');
  }
}

/** Ours and the real SS14.Watchdog, each with the same N idle light instances, alternating trials. */
async function peerFootprint(
  tmp: string,
  n: number,
  trials: number,
  figures: Figure[],
  notes: string[],
  commands: string[],
): Promise<void> {
  const built = await peerExe();
  if (!('exe' in built)) {
    notes.push(skippedLine(built.skipped));
    return;
  }
  const script = await installServer('light-server.mjs', tmp);
  const keys = instanceKeys(n);
  const [oursPort, realPort, ...api] = (await freePorts(2 + 2 * n)) as number[];
  const oursDir = join(tmp, `ours-${n}`);
  const realDir = join(tmp, `real-${n}`);
  await mkdir(oursDir);
  await mkdir(realDir);
  const args = (port: number) => ['--cvar', `net.port=${port}`, '--cvar', 'watchdog.checkin_interval=1'];
  await writeFile(
    join(oursDir, 'appsettings.yml'),
    lightConfig({
      script,
      instances: keys.map((key, i) => ({ key, port: api[i] as number })),
      checkinSeconds: 1,
      timeoutSeconds: 30,
      port: oursPort,
    }),
  );
  await writeFile(
    join(realDir, 'appsettings.yml'),
    peerYaml(
      realPort as number,
      keys.map((key, i) => ({
        key,
        token: TOKEN,
        apiPort: api[n + i] as number,
        runCommand: script,
        timeoutSeconds: 30,
        arguments: args(api[n + i] as number),
      })),
    ),
  );
  const oursRun = () =>
    supervisorTrial({
      cmd: process.execPath,
      args: [WATCHDOG, 'start'],
      cwd: oursDir,
      port: oursPort as number,
      readyPath: '/health',
      n,
    });
  const realRun = () =>
    supervisorTrial({
      cmd: built.exe,
      args: [],
      cwd: realDir,
      port: realPort as number,
      readyPath: '/watchdog/padlock',
      n,
    });
  await realRun();
  await oursRun();
  const ours: SupervisorTrial[] = [];
  const real: SupervisorTrial[] = [];
  for (let i = 0; i < trials; i++) {
    real.push(await realRun());
    ours.push(await oursRun());
  }
  const med = (ts: SupervisorTrial[], pick: (t: SupervisorTrial) => number) => median(ts.map(pick));
  const rssO = med(ours, (t) => t.rss) / MB;
  const rssR = med(real, (t) => t.rss) / MB;
  const readyO = med(ours, (t) => t.readyMs);
  const readyR = med(real, (t) => t.readyMs);
  const allO = med(ours, (t) => t.allLaunchedMs);
  const allR = med(real, (t) => t.allLaunchedMs);
  figures.push(
    figure({
      name: `idle RSS with ${n} light instances, supervisor process only`,
      value: rssO,
      unit: 'MB',
      baselines: [{ name: PEER_NAME, value: rssR }],
    }),
    figure({
      name: `launch → HTTP answering, ${n} instances configured`,
      value: readyO,
      unit: 'ms',
      baselines: [{ name: `${PEER_NAME} (/watchdog/padlock)`, value: readyR }],
    }),
    figure({
      name: `launch → all ${n} servers launched`,
      value: allO,
      unit: 'ms',
      baselines: [{ name: PEER_NAME, value: allR }],
    }),
  );
  notes.push(
    `Against ${PEER_NAME} (bench/peers/ss14-watchdog, Serilog at Warning, as published: framework-dependent, workstation GC (System.GC.Server false in its runtimeconfig.json), tiered JIT): both supervise the same ${n} light servers (bench/servers/light-server.mjs, check-in every 1 s, TimeoutSeconds 30), each in its own folder, ${trials} alternating trials (real first) after one uncounted warm-up pair; medians. Ready = spawn → first 200 from GET /health (ours) or GET /watchdog/padlock (real, which answers without auth once Kestrel listens), polled every 5 ms. All launched = ${n} live direct children. RSS = median of 5 VmRSS readings of the supervisor process (not its servers) 200 ms apart, ${SETTLE_MS / 1000} s after all ${n} were launched. Trials — RSS (MB): ours ${ours.map((t) => (t.rss / MB).toFixed(1)).join(', ')}; real ${real.map((t) => (t.rss / MB).toFixed(1)).join(', ')}. Ready (ms): ours ${ours.map((t) => t.readyMs.toFixed(0)).join(', ')}; real ${real.map((t) => t.readyMs.toFixed(0)).join(', ')}. All launched (ms): ours ${ours.map((t) => t.allLaunchedMs.toFixed(0)).join(', ')}; real ${real.map((t) => t.allLaunchedMs.toFixed(0)).join(', ')}.`,
  );
  commands.push(
    `ours with ${n} instances: node bin/watchdog start (appsettings.yml: ${n} × light-server.mjs)`,
    `${PEER_NAME} with ${n} instances: "$(bash bench/peers/ss14-watchdog/build.sh)" in its folder (appsettings.yml: the same ${n} × light-server.mjs)`,
  );
}

export async function runFootprint(opts: {
  trials: number;
  peerInstances?: number;
}): Promise<Omit<Section, 'load' | 'durationMs'>> {
  const tmp = await tempDir('wd-bench-footprint-');
  const figures: Figure[] = [];
  const notes: string[] = [];
  try {
    const [floorPort, wdPort, demoPort] = (await freePorts(3)) as [number, number, number];
    const wdDir = join(tmp.path, 'wd');
    await mkdir(wdDir);
    await writeFile(
      join(wdDir, 'appsettings.yml'),
      [
        `Urls: http://127.0.0.1:${wdPort}`,
        'Servers:',
        '  Instances:',
        '    demo:',
        `      ApiToken: ${TOKEN}`,
        `      ApiPort: ${demoPort}`,
        `      RunCommand: ${JSON.stringify(join(ROOT, 'bin/demo-server'))}`,
        '      DumpOnTimeout: false',
        `      Arguments: ["--cvar", "net.port=${demoPort}"]`,
        '',
      ].join('\n'),
    );
    const floorRun = () =>
      trial({
        args: [join(BENCH, 'baselines/lib-floor.mjs')],
        cwd: tmp.path,
        env: { BENCH_PORT: String(floorPort) },
        port: floorPort,
        settled: () => true,
      });
    const wdRun = (nodeArgs: string[] = []) =>
      trial({
        args: [WATCHDOG, 'start'],
        cwd: wdDir,
        env: {},
        port: wdPort,
        nodeArgs,
        settled: (body) =>
          (JSON.parse(body) as { instances: Record<string, string> }).instances.demo === 'server.running',
      });
    const buildMs = await buildDist();
    // The same daemon and demo server, compiled: what the package and the image run.
    const compiledRun = () =>
      trial({
        args: [WATCHDOG, 'start'],
        cwd: wdDir,
        env: { WATCHDOG_RUNTIME: 'dist' },
        port: wdPort,
        settled: (body) =>
          (JSON.parse(body) as { instances: Record<string, string> }).instances.demo === 'server.running',
      });
    // Node alone with an HTTP server, with and without the web classes Hono's Node adapter loads.
    const webFloorRun = (webClasses: boolean) =>
      trial({
        args: [join(BENCH, 'baselines/web-floor.mjs')],
        cwd: tmp.path,
        env: { BENCH_PORT: String(floorPort), BENCH_WEB_CLASSES: webClasses ? '1' : '0' },
        port: floorPort,
        settled: () => true,
      });
    let pm2Homes = 0;
    const pm2Run = () =>
      pm2IdleTrial({
        home: join(tmp.path, `pm2-home-${pm2Homes++}`),
        app: {
          name: 'demo',
          script: join(ROOT, 'bin/demo-server'),
          interpreter: process.execPath,
          exec_mode: 'fork',
          autorestart: true,
          args: ['--cvar', `net.port=${demoPort}`],
          env: { WATCHDOG_RUNTIME: 'dist' },
        },
        ready: async () => (await getStatus(demoPort, '/status')) === 200,
        settleMs: SETTLE_MS,
      });
    await floorRun();
    await wdRun();
    await compiledRun();
    await pm2Run();
    const floor: Trial[] = [];
    const wd: Trial[] = [];
    const compiled: Trial[] = [];
    const pm2: Pm2IdleTrial[] = [];
    const httpOnly: Trial[] = [];
    const webClasses: Trial[] = [];
    for (let i = 0; i < opts.trials; i++) {
      httpOnly.push(await webFloorRun(false));
      webClasses.push(await webFloorRun(true));
      floor.push(await floorRun());
      wd.push(await wdRun());
      compiled.push(await compiledRun());
      pm2.push(await pm2Run());
    }
    const rssW = median(wd.map((t) => t.rss)) / MB;
    const rssF = median(floor.map((t) => t.rss)) / MB;
    const readyW = median(wd.map((t) => t.readyMs));
    const readyF = median(floor.map((t) => t.readyMs));
    figures.push(
      figure({
        name: 'idle RSS with the demo instance running',
        value: rssW,
        unit: 'MB',
        baselines: [{ name: 'bare process, same libraries', value: rssF }],
        target: '≤ 1.25× floor',
        met: rssW <= 1.25 * rssF,
        note:
          rssW > 1.25 * rssF
            ? `${(rssW / rssF).toFixed(2)}× floor, ${(rssW - 1.25 * rssF).toFixed(1)} MB over 1.25×`
            : undefined,
      }),
      figure({
        name: 'launch → /health answering',
        value: readyW,
        unit: 'ms',
        baselines: [{ name: 'bare process, same libraries', value: readyF }],
        target: '< 500 ms',
        met: readyW < 500,
        note: readyW >= 500 ? `${(readyW - 500).toFixed(0)} ms over` : undefined,
      }),
    );
    const rssC = median(compiled.map((t) => t.rss)) / MB;
    const readyC = median(compiled.map((t) => t.readyMs));
    const rssP = median(pm2.map((t) => t.rss)) / MB;
    const rssHttp = median(httpOnly.map((t) => t.rss)) / MB;
    const rssWeb = median(webClasses.map((t) => t.rss)) / MB;
    const startP = median(pm2.map((t) => t.startMs));
    const split = (ts: { anon: number; file: number }[]) =>
      `${(median(ts.map((t) => t.anon)) / MB).toFixed(1)} / ${(median(ts.map((t) => t.file)) / MB).toFixed(1)}`;
    figures.push(
      figure({
        name: 'compiled daemon: idle RSS with the demo instance running',
        value: rssC,
        unit: 'MB',
        baselines: [
          { name: 'PM2 daemon idling with the same demo server', value: rssP },
          { name: 'the daemon through tsx (above)', value: rssW },
          { name: 'node:http alone', value: rssHttp },
          { name: 'node:http with the web Request/Response classes loaded', value: rssWeb },
        ],
        target: '≤ PM2 daemon',
        met: rssC <= rssP,
        note: rssC > rssP ? `${(rssC - rssP).toFixed(1)} MB over PM2's daemon` : undefined,
      }),
      figure({
        name: 'compiled daemon: launch → /health answering',
        value: readyC,
        unit: 'ms',
        baselines: [
          { name: '`pm2 start` until it returns (daemon up, app launched)', value: startP },
          { name: 'the daemon through tsx (above)', value: readyW },
          { name: 'bare process, same libraries', value: readyF },
        ],
        target: '≤ 300 ms',
        met: readyC <= 300,
        note: readyC > 300 ? `${(readyC - 300).toFixed(0)} ms over` : undefined,
      }),
    );
    notes.push(
      `Compiled daemon: \`npm run build\` first (${(buildMs / 1000).toFixed(1)} s: tsc to dist/, then esbuild bundles the daemon and the demo server into dist/app/), then \`WATCHDOG_RUNTIME=dist node bin/watchdog start\`, the demo server compiled too; measured as the daemon above. PM2 (v${await privatePm2(tmp.path).version()}): a fresh private PM2_HOME per trial, \`pm2 start\` of the same compiled demo server (fork mode), the app's /status polled until it answers, then ${SETTLE_MS / 1000} s, then the median of 5 VmRSS readings of PM2's daemon (pm2.pid, not the app); \`pm2 kill\`. PM2 has no health endpoint: its time is \`pm2 start\` from spawn to return, for context only. The four subjects alternate in each trial (floor, tsx daemon, compiled daemon, PM2), after one uncounted warm-up round. Trials — RSS (MB): compiled ${compiled.map((t) => (t.rss / MB).toFixed(1)).join(', ')}; PM2 daemon ${pm2.map((t) => (t.rss / MB).toFixed(1)).join(', ')}. Ready (ms): compiled ${compiled.map((t) => t.readyMs.toFixed(0)).join(', ')}; pm2 start ${pm2.map((t) => t.startMs.toFixed(0)).join(', ')}.`,
    );
    notes.push(
      `Where the RSS is (medians, MB: anonymous, i.e. V8's heap and malloc / file-backed, i.e. the pages of the node binary a process has touched): compiled daemon ${split(compiled)}; PM2's daemon ${split(pm2)}; node:http with the web classes ${split(webClasses)}; node:http alone ${split(httpOnly)}.`,
      `What Hono on Node costs before any of the daemon's code: bench/baselines/web-floor.mjs, a bare node:http server, idles on ${rssHttp.toFixed(1)} MB; the same after touching globalThis.Request, Response and Headers (Node's bundled undici, which @hono/node-server reads as it loads) on ${rssWeb.toFixed(1)} MB, ${(rssWeb - rssHttp).toFixed(1)} MB more. PM2's daemon loads none of it. Trials (MB): node:http ${httpOnly.map((t) => (t.rss / MB).toFixed(1)).join(', ')}; with the web classes ${webClasses.map((t) => (t.rss / MB).toFixed(1)).join(', ')}.`,
    );
    notes.push(
      `${opts.trials} alternating trials after one uncounted warm-up pair; medians. RSS = median of 5 VmRSS readings 200 ms apart, ${SETTLE_MS / 1000} s after /health answered (daemon: after the demo instance reported running). Trials (MB): watchdog ${wd.map((t) => (t.rss / MB).toFixed(1)).join(', ')}; floor ${floor.map((t) => (t.rss / MB).toFixed(1)).join(', ')}. Ready (ms): watchdog ${wd.map((t) => t.readyMs.toFixed(0)).join(', ')}; floor ${floor.map((t) => t.readyMs.toFixed(0)).join(', ')}.`,
      "Launch → /health: from spawn() of `node bin/watchdog start` (or the floor) to the first 200 from GET /health, polled every 5 ms on fresh connections. Both go through tsx's register hook; the daemon also compiles its own TypeScript (cached by tsx after the first run), reads and validates its config and prepares the instance folder before it listens.",
      'The floor uses each library a little (a Hono app on @hono/node-server, a one-state xstate actor, a valibot-checked YAML parse, a mitt bus) so they are really loaded, not just resolved.',
    );
    // When start-up misses, profile one launch of the daemon up to /health answering.
    if (readyW >= 500 || process.env.BENCH_PROFILE === '1') {
      const profDir = join(tmp.path, 'prof');
      const t = await wdRun(['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
      const summary = await summarizeProfile(profDir, { toMs: t.readyMs });
      if (summary)
        notes.push(
          `CPU profile of one daemon launch (\`node --cpu-prof bin/watchdog start\`, main thread, spawn → /health in ${t.readyMs.toFixed(0)} ms while profiled): ${profileText(summary)}`,
        );
      const loader = await summarizeProfile(profDir, { toMs: t.readyMs, thread: 'other' });
      if (loader)
        notes.push(
          `Same launch, tsx's module-hook worker thread (resolves and transforms every .ts import): ${profileText(loader)}`,
        );
    }
    const commands = [
      'watchdog: node bin/watchdog start (one instance: bin/demo-server)',
      'floor: node bench/baselines/lib-floor.mjs',
      'compiled watchdog: npm run build; WATCHDOG_RUNTIME=dist node bin/watchdog start (one instance: bin/demo-server, compiled)',
      'PM2: PM2_HOME=<temp> pm2 start ecosystem.config.cjs (one app: bin/demo-server, compiled, fork mode); pm2 kill',
      'node:http alone / with the web classes: BENCH_WEB_CLASSES=0|1 node bench/baselines/web-floor.mjs',
    ];
    await peerFootprint(tmp.path, opts.peerInstances ?? 10, Math.max(3, opts.trials - 1), figures, notes, commands);
    return {
      id: 'footprint',
      title: '5. Footprint',
      figures,
      notes,
      commands,
    };
  } finally {
    await tmp.cleanup();
  }
}
