/**
 * readTreeStats (src/process/tree-stats.ts) over a made-up /proc, and over a real process tree; nextSample's CPU
 * arithmetic (src/supervisor/instance-resources.ts).
 */
import { spawn } from 'node:child_process';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ProcSource, readTreeStats } from '../../src/process/tree-stats.ts';
import { nextSample, type Sample } from '../../src/supervisor/instance-resources.ts';
import { waitFor } from '../_support/env.ts';
import { killGroup } from '../_support/procs.ts';

interface Fake {
  ppid: number;
  pgid: number;
  state?: string;
  /** utime, stime, cutime, cstime in ticks. */
  ticks: [number, number, number, number];
  rssKb: number | null;
  comm?: string;
}

/** A /proc of the given processes: stat in proc(5)'s layout (fields 1-17), status with its VmRSS line. */
function fakeProc(procs: Record<number, Fake>): ProcSource {
  return {
    pids: () => Object.keys(procs).map(Number),
    read: (pid, file) => {
      const p = procs[pid];
      if (!p) return null;
      if (file === 'status')
        return `Name:\tx\nState:\tS\n${p.rssKb === null ? '' : `VmRSS:\t   ${p.rssKb} kB\n`}Threads:\t1\n`;
      const [u, s, cu, cs] = p.ticks;
      // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime …
      return `${pid} (${p.comm ?? 'srv'}) ${p.state ?? 'S'} ${p.ppid} ${p.pgid} 1 0 -1 0 0 0 0 0 ${u} ${s} ${cu} ${cs} 20 0 1 0 1000 0 0\n`;
    },
  };
}

const tree = suite('process :: tree stats');

tree('tree-stats :: sums the group and every descendant; leaves out strangers and zombies', async () => {
  const proc = fakeProc({
    100: { ppid: 1, pgid: 100, ticks: [100, 50, 20, 10], rssKb: 1000, comm: 'Robust.Server (x) y' },
    101: { ppid: 100, pgid: 100, ticks: [10, 0, 0, 0], rssKb: 200 },
    // Moved to its own session, still a descendant.
    102: { ppid: 101, pgid: 102, ticks: [5, 5, 0, 0], rssKb: 300 },
    // Left the tree by double-forking but stayed in the group.
    104: { ppid: 1, pgid: 100, ticks: [1, 1, 0, 0], rssKb: 10 },
    // A zombie child: its time is not its parent's until reaped, its memory is gone.
    103: { ppid: 100, pgid: 100, state: 'Z', ticks: [7, 7, 0, 0], rssKb: null },
    // Someone else's processes.
    200: { ppid: 1, pgid: 200, ticks: [999, 999, 0, 0], rssKb: 99999 },
    201: { ppid: 200, pgid: 200, ticks: [999, 0, 0, 0], rssKb: 99999 },
  });
  const stats = readTreeStats(100, { proc });
  assert.equal(stats, { rssBytes: (1000 + 200 + 300 + 10) * 1024, cpuSeconds: 2.02, processes: 4 });
});

tree('tree-stats :: a server that is not a group leader takes its descendants, not its group', async () => {
  const proc = fakeProc({
    50: { ppid: 1, pgid: 50, ticks: [500, 0, 0, 0], rssKb: 5000 },
    100: { ppid: 50, pgid: 50, ticks: [100, 0, 0, 0], rssKb: 1000 },
    101: { ppid: 100, pgid: 50, ticks: [100, 0, 0, 0], rssKb: 1000 },
  });
  assert.equal(readTreeStats(100, { proc }), { rssBytes: 2000 * 1024, cpuSeconds: 2, processes: 2 });
});

tree(
  "tree-stats :: the launch's cgroup: a helper that double-forked out of the group and the tree counts, with its children",
  async () => {
    const proc = fakeProc({
      100: { ppid: 1, pgid: 100, ticks: [100, 0, 0, 0], rssKb: 1000 },
      300: { ppid: 1, pgid: 300, ticks: [50, 0, 0, 0], rssKb: 500 },
      301: { ppid: 300, pgid: 300, ticks: [50, 0, 0, 0], rssKb: 500 },
      400: { ppid: 1, pgid: 400, ticks: [999, 0, 0, 0], rssKb: 9999 },
    });
    assert.equal(readTreeStats(100, { proc, alsoPids: [100, 300, 999] }), {
      rssBytes: 2000 * 1024,
      cpuSeconds: 2,
      processes: 3,
    });
    assert.is(readTreeStats(100, { proc })?.processes, 1, 'without the cgroup: the server alone');
  },
);

tree('tree-stats :: a server that has gone or is a zombie, or no pid at all → null', async () => {
  const proc = fakeProc({ 100: { ppid: 1, pgid: 100, state: 'Z', ticks: [1, 1, 0, 0], rssKb: null } });
  assert.is(readTreeStats(100, { proc }), null);
  assert.is(readTreeStats(7, { proc }), null);
  for (const pid of [0, -1, 1.5, Number.NaN]) assert.is(readTreeStats(pid, { proc }), null, String(pid));
});

tree('tree-stats :: one pass over /proc serves every tree sampled soon after it; members are read again', () => {
  const procs: Record<number, Fake> = {
    100: { ppid: 1, pgid: 100, ticks: [10, 0, 0, 0], rssKb: 1000 },
    101: { ppid: 100, pgid: 100, ticks: [5, 0, 0, 0], rssKb: 100 },
    200: { ppid: 1, pgid: 200, ticks: [20, 0, 0, 0], rssKb: 2000 },
  };
  const fake = fakeProc(procs);
  let passes = 0;
  const proc: ProcSource = {
    ...fake,
    pids: () => {
      passes++;
      return fake.pids();
    },
  };
  assert.equal(readTreeStats(100, { proc }), { rssBytes: 1100 * 1024, cpuSeconds: 0.15, processes: 2 });
  // The child used more CPU, then pid 101 ended and was taken by a process of another parent.
  procs[101] = { ppid: 100, pgid: 100, ticks: [9, 0, 0, 0], rssKb: 100 };
  assert.equal(readTreeStats(100, { proc })?.cpuSeconds, 0.19, "the member's figures are fresh");
  assert.equal(readTreeStats(200, { proc }), { rssBytes: 2000 * 1024, cpuSeconds: 0.2, processes: 1 });
  procs[101] = { ppid: 200, pgid: 200, ticks: [1, 0, 0, 0], rssKb: 50 };
  assert.equal(readTreeStats(100, { proc }), { rssBytes: 1000 * 1024, cpuSeconds: 0.1, processes: 1 });
  assert.is(passes, 1, 'one pass for four samples of two trees');
});

tree('tree-stats :: a real tree: a group leader and its busy child, both counted from /proc', async () => {
  // The child burns 300 ms of CPU (by its own count; at most 20 s on a busy machine), then both idle until killed.
  const burn =
    'const t = Date.now(); const used = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };' +
    ' while (used() < 0.3 && Date.now() - t < 20000); setInterval(() => {}, 1000)';
  const parent = `require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(burn)}], { stdio: 'ignore' }); setInterval(() => {}, 1000)`;
  const leader = spawn(process.execPath, ['-e', parent], { stdio: 'ignore', detached: true });
  try {
    const pid = leader.pid as number;
    const stats = await waitFor(
      'two processes and the child CPU time',
      () => {
        const s = readTreeStats(pid);
        return s !== null && s.processes === 2 && s.cpuSeconds >= 0.3 ? s : undefined;
      },
      30_000,
      100,
    );
    // Two node processes: each well over 10 MB resident, together well under 2 GB.
    assert.ok(stats.rssBytes > 20 * 1024 * 1024 && stats.rssBytes < 2 * 1024 ** 3, `rss ${stats.rssBytes}`);
    assert.ok(stats.cpuSeconds < 60, String(stats.cpuSeconds));
  } finally {
    killGroup(leader.pid);
  }
});

const math = suite('supervisor :: resource sample arithmetic');
const read = (cpuSeconds: number, rssBytes = 1) => ({ cpuSeconds, rssBytes, processes: 1 });

math('sample :: the first sample: CPU over the time since the launch', () => {
  const s = nextSample(null, 10, read(2), 20_000, 10_000);
  assert.is(s.cpuPercent, 20);
  assert.is(s.cpuSeconds, 2);
  // An adopted server (launch time unknown): no interval yet, so 0 %.
  assert.is(nextSample(null, 10, read(2), 20_000, null).cpuPercent, 0);
});

/** nextSample over successive readings of pid 10 (`[cpuSeconds, atMs]`), each from the sample before it. */
function samples(launchedAt: number | null, ...readings: Array<[number, number]>): Sample[] {
  const out: Sample[] = [];
  for (const [cpuSeconds, at] of readings)
    out.push(nextSample(out.at(-1) ?? null, 10, read(cpuSeconds), at, launchedAt));
  return out;
}

math('sample :: then CPU over the interval, in % of one core: two busy cores read 200', () => {
  const [, b, c] = samples(10_000, [2, 20_000], [12, 25_000], [12.05, 30_000]);
  assert.is(b?.cpuPercent, 200);
  assert.is(b?.cpuSeconds, 12);
  assert.is(c?.cpuPercent, 1);
});

math('sample :: a falling CPU sum (a helper gone, not reaped) counts 0, and the total never goes back', () => {
  const [, b, c] = samples(0, [5, 10_000], [3, 15_000], [4, 20_000]);
  assert.is(b?.cpuPercent, 0);
  assert.is(b?.cpuSeconds, 5);
  assert.is(c?.cpuPercent, 20);
  assert.is(c?.cpuSeconds, 6);
});

math('sample :: a new server (another pid) starts over', () => {
  const a = nextSample(null, 10, read(50), 10_000, 0);
  const b = nextSample(a, 11, read(1), 20_000, 15_000);
  assert.is(b.cpuSeconds, 1);
  assert.is(b.cpuPercent, 20);
});

tree.run();
math.run();
