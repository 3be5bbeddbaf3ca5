import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ProbeResult } from '../../src/kit/probe.ts';
import { runMain } from '../_support/cli.ts';
import { type RunningDemo, startDemo } from '../_support/demo.ts';
import { freePort } from '../_support/env.ts';

/** Runs `bin/watchdog probe ...` and collects its output and exit code. */
const watchdogProbe = (args: string[]) => runMain(['probe', ...args], { cwd: process.cwd() });

interface Ctx {
  demo?: RunningDemo;
}
const test = suite<Ctx>('demo :: watchdog probe against the demo server', {});

test.before(async (ctx) => {
  ctx.demo = await startDemo([
    '--cvar',
    'game.hostname=[EN][18+] Test',
    '--cvar',
    'hub.tags=region:eu_w',
    '--cvar',
    'status.links=[{"name":"Wiki","icon":"wiki","url":"https://wiki.example"}]',
  ]);
});
test.after(async (ctx) => {
  await ctx.demo?.kill();
});

test('probe :: prints name, players, inferred lang:en and 18+, region name, links, connect address; exit 0', async ({
  demo,
}) => {
  const r = await watchdogProbe([`127.0.0.1:${demo!.port}`]);
  assert.is(r.code, 0, r.stderr + r.stdout);
  for (const part of [
    '[EN][18+] Test',
    '0 / 32',
    'lang:en, 18+',
    'eu_w (Western Europe)',
    'Required',
    'Wiki [wiki] https://wiki.example',
    `udp://127.0.0.1:${demo!.port}/ (derived`,
    'no problems',
  ]) {
    assert.ok(r.stdout.includes(part), `missing "${part}" in:\n${r.stdout}`);
  }
});

test('probe :: --json prints exactly the documented shape', async ({ demo }) => {
  const r = await watchdogProbe([`127.0.0.1:${demo!.port}`, '--json']);
  assert.is(r.code, 0, r.stderr);
  const json = JSON.parse(r.stdout) as ProbeResult;
  assert.equal(Object.keys(json), [
    'address',
    'statusUrl',
    'infoUrl',
    'status',
    'info',
    'tags',
    'regions',
    'connectAddress',
    'problems',
  ]);
  assert.is(json.statusUrl, `http://127.0.0.1:${demo!.port}/status`);
  assert.equal(json.tags, { explicit: ['region:eu_w'], inferred: ['lang:en', '18+'] });
  assert.equal(json.regions, [{ tag: 'region:eu_w', code: 'eu_w', name: 'Western Europe' }]);
  assert.is(json.connectAddress, `udp://127.0.0.1:${demo!.port}/`);
  assert.equal(json.problems, []);
  assert.is((json.status as { name: string }).name, '[EN][18+] Test');
});

test('probe :: an unreachable server → exit 1 with the problems listed', async () => {
  const port = await freePort();
  const r = await watchdogProbe([`127.0.0.1:${port}`, '--json']);
  assert.is(r.code, 1);
  const json = JSON.parse(r.stdout) as ProbeResult;
  assert.equal(
    json.problems.map((p) => p.path),
    ['status', 'info'],
  );
});

test('probe :: usage errors → exit 2', async () => {
  assert.is((await watchdogProbe([])).code, 2);
  assert.is((await watchdogProbe(['a', 'b'])).code, 2);
  const bad = await watchdogProbe(['ftp://x']);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /ftp:\/\/ is not supported/);
  assert.is((await watchdogProbe(['--bogus', 'x'])).code, 2);
});
test.run();
