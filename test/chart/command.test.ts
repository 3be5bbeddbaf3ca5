import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { renderChart } from '../../src/chart/render.ts';
import { tempSuite } from '../_support/env.ts';
import { runWatchdog } from '../config/watchdog-bin.ts';

/** `bin/watchdog chart …` as a real process, from a folder that is not the project. */
const chart = (args: string[], cwd: string) => runWatchdog(['chart', ...args], cwd);

const cli = tempSuite('watchdog chart', { prefix: 'wd-chart-' });

cli('chart :: prints Mermaid by default, DOT and JSON on request', async ({ dir }) => {
  const [mermaid, dot, json] = await Promise.all([
    chart([], dir),
    chart(['--format', 'dot'], dir),
    chart(['-f', 'json'], dir),
  ]);
  assert.is(mermaid.status, 0, mermaid.stderr);
  assert.is(mermaid.stdout, renderChart('mermaid'));
  assert.is(dot.status, 0, dot.stderr);
  assert.is(dot.stdout, renderChart('dot'));
  assert.is(json.status, 0, json.stderr);
  assert.is(json.stdout, renderChart('json'));
});

cli('chart :: --out writes the file (folders created), relative to where it runs', async ({ dir }) => {
  const r = await chart(['--format', 'dot', '--out', 'out/chart.dot'], dir);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout, '');
  assert.is(await readFile(join(dir, 'out/chart.dot'), 'utf8'), renderChart('dot'));
});

cli('chart :: a bad format or option prints the usage and exits 2', async ({ dir }) => {
  const bad = await chart(['--format', 'png'], dir);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, 'unknown format "png"');
  assert.match(bad.stderr, 'usage: watchdog chart [--format mermaid|dot|json] [--out FILE]');
  assert.is(bad.stdout, '');
  const unknown = await chart(['--colour'], dir);
  assert.is(unknown.status, 2);
  assert.match(unknown.stderr, 'usage: watchdog chart');
});

cli('chart :: an unwritable --out exits 1 and says where', async ({ dir }) => {
  await writeFile(join(dir, 'missing-dir-is-a-file'), 'a file where a folder should be');
  const blocked = await chart(['--out', join(dir, 'missing-dir-is-a-file', 'x.mmd')], dir);
  assert.is(blocked.status, 1);
  assert.match(blocked.stderr, 'cannot write');
});

cli.run();
