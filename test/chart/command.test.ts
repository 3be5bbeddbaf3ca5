import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderChart } from '../../src/chart/render.ts';
import { ROOT, tempDir } from '../_support/env.ts';

/** `bin/watchdog chart …` as a real process, from a folder that is not the project. */
function chart(args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/watchdog'), 'chart', ...args],
      { cwd, encoding: 'utf8', timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err && typeof err.code === 'number' ? err.code : err ? null : 0;
        resolve({ status: code, stdout, stderr });
      },
    );
  });
}

const cli = suite('watchdog chart');

cli('chart :: prints Mermaid by default, DOT and JSON on request', async () => {
  const t = await tempDir('wd-chart-');
  try {
    const [mermaid, dot, json] = await Promise.all([
      chart([], t.path),
      chart(['--format', 'dot'], t.path),
      chart(['-f', 'json'], t.path),
    ]);
    assert.is(mermaid.status, 0, mermaid.stderr);
    assert.is(mermaid.stdout, renderChart('mermaid'));
    assert.is(dot.status, 0, dot.stderr);
    assert.is(dot.stdout, renderChart('dot'));
    assert.is(json.status, 0, json.stderr);
    assert.is(json.stdout, renderChart('json'));
  } finally {
    await t.cleanup();
  }
});

cli('chart :: --out writes the file (folders created), relative to where it runs', async () => {
  const t = await tempDir('wd-chart-');
  try {
    const r = await chart(['--format', 'dot', '--out', 'out/chart.dot'], t.path);
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout, '');
    assert.is(await readFile(join(t.path, 'out/chart.dot'), 'utf8'), renderChart('dot'));
  } finally {
    await t.cleanup();
  }
});

cli('chart :: a bad format or option prints the usage and exits 2', async () => {
  const t = await tempDir('wd-chart-');
  try {
    const bad = await chart(['--format', 'png'], t.path);
    assert.is(bad.status, 2);
    assert.match(bad.stderr, 'unknown format "png"');
    assert.match(bad.stderr, 'usage: watchdog chart [--format mermaid|dot|json] [--out FILE]');
    assert.is(bad.stdout, '');
    const unknown = await chart(['--colour'], t.path);
    assert.is(unknown.status, 2);
    assert.match(unknown.stderr, 'usage: watchdog chart');
  } finally {
    await t.cleanup();
  }
});

cli('chart :: an unwritable --out exits 1 and says where', async () => {
  const t = await tempDir('wd-chart-');
  try {
    await writeFile(join(t.path, 'missing-dir-is-a-file'), 'a file where a folder should be');
    const blocked = await chart(['--out', join(t.path, 'missing-dir-is-a-file', 'x.mmd')], t.path);
    assert.is(blocked.status, 1);
    assert.match(blocked.stderr, 'cannot write');
  } finally {
    await t.cleanup();
  }
});

cli.run();
