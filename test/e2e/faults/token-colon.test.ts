import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../../src/config/load.ts';
import { buildLaunchSpec } from '../../../src/process/launch-spec.ts';
import { testConfig } from '../../_support/config.ts';
import { basic, daemonSuite, type RunningDaemon } from '../../_support/daemon.ts';
import { freePort, waitFor } from '../../_support/env.ts';
import { fixture } from '../../_support/fixtures.ts';
import {
  checkedInPastTimeout,
  fixedUrls,
  isAlive,
  killGroup,
  readProcessStartTime,
  running,
  waitStatus,
} from '../resilience/_support/daemon-crash.ts';

/**
 * Tokens containing `:` (RFC 7617: the password is everything after the first colon; the real watchdog refuses such
 * tokens). The ApiToken is configured with colons. A launch secret never has one (base64), so to see a server check
 * in with one, the test launches the server itself, exactly as the daemon would, with the secret `se:cr:et`, and
 * records it in data.json for the daemon to adopt (PersistServers).
 */
const API_TOKEN = 'to:k:en';
const SECRET = 'se:cr:et';
/** The instance's TimeoutSeconds. */
const TIMEOUT_S = 3;

const test = daemonSuite('e2e :: faults: tokens containing ":"', {
  prefix: 'wd-colon-',
  ctx: { own: null as number | null, pids: [] as number[] },
  config: async (ctx) => {
    const urls = await freePort();
    const yaml = fixedUrls(
      testConfig({
        persist: true,
        instances: [
          {
            key: 'c',
            token: API_TOKEN,
            port: await freePort(),
            runCommand: fixture('echo-env.mjs'),
            timeoutSeconds: TIMEOUT_S,
          },
        ],
      }),
      urls,
    );
    await writeFile(join(ctx.dir, 'appsettings.yml'), yaml);
    const loaded = await loadConfig({ cwd: ctx.dir, env: {} });
    if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
    const instance = loaded.config.instances[0]!;
    await mkdir(join(instance.dir, 'logs'), { recursive: true });
    const spec = buildLaunchSpec({
      key: 'c',
      instance,
      baseUrl: `http://localhost:${urls}/`,
      secret: SECRET,
      providerCvars: [],
      env: process.env,
    });
    const out = openSync(join(instance.dir, 'logs/server.log'), 'a');
    const child = spawn(spec.program, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    child.unref();
    ctx.own = child.pid!;
    const startTime = await waitFor('its start time', () => readProcessStartTime(ctx.own!), 5000);
    await writeFile(
      join(instance.dir, 'data.json'),
      JSON.stringify({
        version: 1,
        updateType: null,
        revision: null,
        previousRevision: null,
        launch: {
          pid: ctx.own,
          startTime,
          program: spec.program,
          args: spec.args,
          secret: SECRET,
          launchedAt: new Date().toISOString(),
        },
      }),
    );
    return yaml;
  },
  after: (ctx) => {
    killGroup(ctx.own);
    ctx.pids.forEach(killGroup);
  },
});

const ping = async (d: RunningDaemon, password: string) => {
  const res = await fetch(`${d.url}/server_api/c/ping`, {
    method: 'POST',
    headers: { authorization: basic('c', password) },
  });
  await res.arrayBuffer();
  return res.status;
};

test('token-colon :: a server whose secret contains ":" checks in, and keeps the instance running', async (ctx) => {
  const d = ctx.daemon!;
  const s = await waitStatus(d, 'c', API_TOKEN, 'adopted', (st) => running(st) && st.pid === ctx.own);
  // Check-ins accepted for longer than TimeoutSeconds: only accepted check-ins keep it running.
  const later = await checkedInPastTimeout(d, 'c', API_TOKEN, Date.now(), TIMEOUT_S);
  assert.is(later.state, 'server.running');
  assert.is(later.pid, s.pid);
  assert.is(later.restarts, 0);
  // Everything after the FIRST colon is the password: a prefix of it is wrong.
  assert.is(await ping(d, SECRET), 200);
  assert.is(await ping(d, 'se'), 401);
  assert.is(await ping(d, `${SECRET}:`), 401);
});

test('token-colon :: an ApiToken containing ":" works for control; the adopted server is shut down with its ":" secret', async (ctx) => {
  const d = ctx.daemon!;
  const status = async (token: string) =>
    (await fetch(`${d.url}/instances/c/status`, { headers: { authorization: basic('c', token) } })).status;
  assert.is(await status(API_TOKEN), 200);
  assert.is(await status('to'), 401);
  assert.is(await status('to:k'), 401);
  assert.is(await d.control('c', API_TOKEN, 'restart'), 200);
  const next = await waitStatus(d, 'c', API_TOKEN, 'relaunched', (st) => running(st) && st.pid !== ctx.own, 15_000);
  ctx.pids.push(next.pid!);
  await waitFor('the adopted server gone', () => !isAlive(ctx.own!), 5000);
  const log = await readFile(join(ctx.dir, 'instances/c/logs/server.log'), 'utf8');
  assert.match(
    log,
    /Restart requested by the watchdog, shutting down\.\.\./,
    'POST /shutdown was authenticated with WatchdogToken se:cr:et',
  );
});

test.run();
