import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { statePaths } from '../../src/chart/graph.ts';
import { operatorGraph } from '../../src/chart/operator.ts';
import { NODE_ID_PREFIX, renderChart, renderChartSvg } from '../../src/chart/render.ts';
import { runCli, runMain } from '../_support/cli.ts';
import { tempSuite } from '../_support/env.ts';

/** `watchdog chart …` (its main() in this process), from a folder that is not the project. */
const chart = (args: string[], cwd: string) => runMain(['chart', ...args], { cwd });

const cli = tempSuite('watchdog chart', { prefix: 'wd-chart-' });

cli('chart :: prints Mermaid by default, DOT and JSON on request', async ({ dir }) => {
  const [mermaid, dot, json] = await Promise.all([
    chart([], dir),
    chart(['--format', 'dot'], dir),
    chart(['-f', 'json'], dir),
  ]);
  assert.is(mermaid.code, 0, mermaid.stderr);
  assert.is(mermaid.stdout, renderChart('mermaid'));
  assert.is(dot.code, 0, dot.stderr);
  assert.is(dot.stdout, renderChart('dot'));
  assert.is(json.code, 0, json.stderr);
  assert.is(json.stdout, renderChart('json'));
  // The operator's stop, the update-check and maintenance regions are charted, the hold beside the pending action.
  const paths = (JSON.parse(json.stdout) as { states: Array<{ path: string }> }).states.map((s) => s.path);
  const regions = ['operatorStop.stopped', 'updateCheck.running', 'maintenance.action.pending.waiting.Empty'];
  for (const p of [...regions, 'maintenance.hold.held']) assert.ok(paths.includes(p), `${p} is in the JSON`);
});

cli('chart :: --format svg writes the drawing the dashboard serves, one node per state', async ({ dir }) => {
  const r = await chart(['--format', 'svg', '--out', 'chart.svg'], dir);
  assert.is(r.code, 0, r.stderr);
  const svg = await readFile(join(dir, 'chart.svg'), 'utf8');
  assert.is(svg, `${await renderChartSvg()}\n`);
  assert.match(svg, /^<svg\b[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  for (const path of statePaths()) assert.match(svg, `id="${NODE_ID_PREFIX}${path.replace(/-/g, '&#45;')}"`, path);
});

cli("chart :: --view operator draws the server's life in plain words, in every format", async ({ dir }) => {
  const [dot, svg, json] = await Promise.all([
    chart(['--format', 'dot', '--view', 'operator'], dir),
    chart(['--format', 'svg', '--view', 'operator', '--out', 'op.svg'], dir),
    chart(['--format', 'json', '--view', 'operator'], dir),
  ]);
  assert.is(dot.code, 0, dot.stderr);
  assert.is(dot.stdout, renderChart('dot', 'operator'));
  assert.match(dot.stdout, '"server.running" [label=<running');
  assert.not.match(dot.stdout, 'updateCheck', 'the update-check region is the developer view');
  assert.is(svg.code, 0, svg.stderr);
  assert.match(svg.stderr, 'wrote the operator chart as svg');
  const drawn = await readFile(join(dir, 'op.svg'), 'utf8');
  assert.is(drawn, `${await renderChartSvg(undefined, 'operator')}\n`);
  for (const path of statePaths()) assert.match(drawn, `id="${NODE_ID_PREFIX}${path.replace(/-/g, '&#45;')}"`, path);
  assert.is(json.code, 0, json.stderr);
  assert.equal(JSON.parse(json.stdout), operatorGraph());
  const bad = await chart(['--view', 'manager'], dir);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, 'unknown view "manager"; choose one of operator, developer');
});

cli('chart :: --out writes the file (folders created), relative to where it runs', async ({ dir }) => {
  const r = await chart(['--format', 'dot', '--out', 'out/chart.dot'], dir);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout, '');
  assert.is(await readFile(join(dir, 'out/chart.dot'), 'utf8'), renderChart('dot'));
});

cli('chart :: a bad format or option prints the usage and exits 2', async ({ dir }) => {
  const bad = await chart(['--format', 'png'], dir);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, 'unknown format "png"');
  assert.match(
    bad.stderr,
    'usage: watchdog chart [--format mermaid|dot|json|svg] [--view operator|developer] [--out FILE]',
  );
  assert.is(bad.stdout, '');
  const unknown = await chart(['--colour'], dir);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, 'usage: watchdog chart');
});

cli('chart :: an unwritable --out exits 1 and says where', async ({ dir }) => {
  await writeFile(join(dir, 'missing-dir-is-a-file'), 'a file where a folder should be');
  const blocked = await chart(['--out', join(dir, 'missing-dir-is-a-file', 'x.mmd')], dir);
  assert.is(blocked.code, 1);
  assert.match(blocked.stderr, 'cannot write');
});

// Node's own recursive mkdir spins forever under /proc (src/make-dir.ts): the real bin, ended after 30 s if it spins.
cli('chart :: an --out under /proc exits 1 instead of spinning', async ({ dir }) => {
  const out = `/proc/watchdog-no-such-${process.pid}/chart/x.mmd`;
  const r = await runCli(['chart', '--out', out], { cwd: dir, timeoutMs: 30_000 });
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, `cannot write ${out}`);
});

cli.run();
