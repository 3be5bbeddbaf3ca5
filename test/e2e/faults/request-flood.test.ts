import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { testConfig } from '../../_support/config.ts';
import { basic, daemonSuite, type RunningDaemon } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import { metricValue } from '../../_support/metric-value.ts';
import { killGroup, running, statusOf, waitStatus } from '../resilience/_support/daemon-crash.ts';

/** The flood: this many refused control requests, this many at a time, all to 127.0.0.1. */
const FLOOD = 3000;
const PARALLEL = 50;
/** What the flood may add to audit.log and to the daemon's log, whatever FLOOD is. */
const BOUND_BYTES = 8 * 1024;

const JUNK = [
  'Basic !!!not base64!!!',
  basic('chatty', 'guess'),
  basic('mallory', 'tok'),
  'Bearer whatever',
  basic('ghost', 'tok'),
];

async function flood(d: RunningDaemon): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < FLOOD) {
      const i = next++;
      const key = i % 5 === 4 ? 'ghost' : 'chatty';
      const res = await fetch(`${d.url}/instances/${key}/restart`, {
        method: 'POST',
        headers: { authorization: JUNK[i % JUNK.length] as string },
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return statuses;
}

/** Requests refused so far, by the metric (every route, every status). */
async function refusedSoFar(d: RunningDaemon): Promise<number> {
  const text = await (await fetch(`${d.url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  return [...text.matchAll(/^watchdog_refused_requests_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

const auditSize = async (dir: string) => (await stat(join(dir, 'logs', 'audit.log')).catch(() => null))?.size ?? 0;

/**
 * Every refused control request appended ~570 bytes to audit.log and a WARN line to the daemon's log, so a
 * stranger without credentials could fill the disk. Now the first from a source is written in full and the rest
 * are summarised once per interval, and counted in `watchdog_refused_requests_total`.
 */
/** A daemon with one chatty instance, `extra` added to its config; the server's group is killed after each test. */
const chattySuite = (name: string, prefix: string, extra: string) =>
  daemonSuite(name, {
    prefix,
    ctx: { pid: null as number | null },
    config: async () =>
      testConfig({
        instances: [{ key: 'chatty', port: await freePort(), runCommand: fixture('log-starts.mjs') }],
        extra,
      }),
    after: (ctx) => killGroup(ctx.pid),
  });

const test = chattySuite(
  'e2e :: faults: a flood of refused control requests',
  'wd-flood-',
  // One summary line per interval while the flood lasts: at 5 s, the bound holds for a flood of up to about 4
  // minutes (a loaded machine took 30 s and more; at 0.5 s its summaries alone passed the bound).
  '  RefusedRequestLogSeconds: 5',
);

test(`request-flood :: ${FLOOD} refused requests grow audit.log and the daemon log by under ${BOUND_BYTES} bytes each`, async (ctx) => {
  const d = ctx.daemon!;
  // Waited for in the daemon's log, not by polling the status: a poll while the instance is still being prepared is
  // refused (503), and would open 127.0.0.1's refusal window before the flood's first request.
  await waitFor('the server running', () => /\[watchdog:chatty\] state server\.running/.test(d.log()), 15_000);
  ctx.pid = (await statusOf(d, 'chatty', 'tok')).pid;
  assert.is(await refusedSoFar(d), 0, 'no request refused before the flood: its first one is written in full');
  const auditBefore = await auditSize(ctx.dir);
  const logBefore = d.log().length;
  const statuses = await flood(d);
  assert.is(statuses.length, FLOOD);
  assert.ok(
    statuses.every((s) => s === 400 || s === 401 || s === 403 || s === 404),
    'every one refused',
  );
  // Every one written down: the first in full, the rest in summaries (the last interval's included), in both logs.
  const auditLines = async () =>
    (await readFile(join(ctx.dir, 'logs', 'audit.log')))
      .subarray(auditBefore)
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { summary?: string; refused?: number; result?: string });
  const summedIn = (refused: number[]) => refused.reduce((n, r) => n + r, 0);
  const logged = () =>
    summedIn(
      [
        ...d
          .log()
          .slice(logBefore)
          .matchAll(/ refused=(\d+)/g),
      ].map((m) => Number(m[1])),
    );
  await waitFor(
    `${FLOOD - 1} refusals summarised in the daemon log and in audit.log`,
    async () => logged() >= FLOOD - 1 && summedIn((await auditLines()).map((l) => l.refused ?? 0)) >= FLOOD - 1,
    20_000,
  );
  const auditGrowth = (await auditSize(ctx.dir)) - auditBefore;
  const logGrowth = d
    .log()
    .slice(logBefore)
    .replace(/^.*\[watchdog:chatty:server\].*\n/gm, '').length;
  console.log(`  flood: ${FLOOD} requests; audit.log +${auditGrowth} B, daemon log +${logGrowth} B`);
  assert.ok(auditGrowth < BOUND_BYTES, `audit.log grew by ${auditGrowth} bytes`);
  assert.ok(logGrowth < BOUND_BYTES, `the daemon log grew by ${logGrowth} bytes`);

  const lines = await auditLines();
  const full = lines.filter((l) => l.result === 'refused').length;
  const summarised = lines.reduce((n, l) => n + (l.refused ?? 0), 0);
  assert.is(full, 1, 'the first in full');
  assert.is(summarised, FLOOD - 1, 'every other one in a summary');
  assert.ok(lines.some((l) => /^\d[\d,]* refused requests from 127\.0\.0\.1 in the last \d+ s$/.test(l.summary ?? '')));

  const total = await Promise.all(
    ['400', '401', '403', '404'].map((status) =>
      metricValue(d.url, 'watchdog_refused_requests_total', { route: 'control', status }),
    ),
  );
  assert.is(
    total.reduce<number>((a, b) => a + (b ?? 0), 0),
    FLOOD,
    'the metric counts every one',
  );

  // An accepted control action right after the flood is audited in full.
  assert.is(await d.control('chatty', 'tok', 'hold'), 200);
  await waitFor('the accepted hold in audit.log', async () => {
    const last = (await readFile(join(ctx.dir, 'logs', 'audit.log'), 'utf8')).trim().split('\n').at(-1) ?? '{}';
    const line = JSON.parse(last) as { action?: string; result?: string; user?: string; remote?: string };
    return line.action === 'hold' && line.result === 'accepted' && line.user === 'chatty' && !!line.remote;
  });
  assert.is(d.proc.exitCode, null);
});

const rotation = chattySuite(
  'e2e :: faults: audit.log rotation',
  'wd-auditrot-',
  'Logs:\n  AuditLogMaxBytes: 1024\n  AuditLogFiles: 3',
);

rotation(
  'request-flood :: accepted actions rotate audit.log at its size and keep at most AuditLogFiles files',
  async (ctx) => {
    const d = ctx.daemon!;
    ctx.pid = (await waitStatus(d, 'chatty', 'tok', 'server.running', running)).pid;
    for (let i = 0; i < 40; i++) assert.is(await d.control('chatty', 'tok', i % 2 === 0 ? 'hold' : 'release'), 200);
    const files = (await readdir(join(ctx.dir, 'logs'))).filter((n) => n.startsWith('audit.log')).sort();
    assert.equal(files, ['audit.log', 'audit.log.1', 'audit.log.2']);
    for (const f of files) {
      const size = (await stat(join(ctx.dir, 'logs', f))).size;
      assert.ok(size <= 1024, `${f} is ${size} bytes`);
    }
    // The newest lines are in audit.log, whole.
    const last = (await readFile(join(ctx.dir, 'logs', 'audit.log'), 'utf8')).trim().split('\n').at(-1) ?? '';
    assert.is((JSON.parse(last) as { action: string }).action, 'release');
  },
);

test.run();
rotation.run();
