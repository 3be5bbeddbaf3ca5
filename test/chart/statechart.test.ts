import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { renderChart } from '../../src/chart/render.ts';
import { ROOT } from '../_support/env.ts';
import { STATUS_PATHS } from './_support/state-paths.ts';

const docs = suite('docs/statechart.md');

docs('statechart :: the committed chart is what the machine renders today', async () => {
  const md = await readFile(join(ROOT, 'docs/statechart.md'), 'utf8');
  const block = /```mermaid\n([\s\S]*?)```/.exec(md)?.[1];
  assert.ok(block, 'docs/statechart.md holds a ```mermaid block');
  assert.fixture(
    block,
    renderChart('mermaid'),
    'docs/statechart.md is stale: replace its ```mermaid block with the output of `bin/watchdog chart`',
  );
});

docs('statechart :: the prose explains every state the status can show', async () => {
  const md = await readFile(join(ROOT, 'docs/statechart.md'), 'utf8');
  // The leaves, and the two parents the prose explains too.
  for (const path of [...STATUS_PATHS, 'decide', 'server']) {
    assert.match(md, `**\`${path}\`**`, `a paragraph for ${path}`);
  }
});

docs.run();
