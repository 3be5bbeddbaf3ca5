import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CHART_VIEWS, isChartView } from '../../chart/operator.ts';
import { CHART_FORMATS, type ChartFormat, renderChart, renderChartSvg } from '../../chart/render.ts';
import { describeError, UsageError } from '../../errors.ts';
import { makeDir } from '../../make-dir.ts';
import { parseCommandArgs } from '../client/args.ts';
import { ClientError } from '../client/errors.ts';
import type { CommandOptions } from '../registry.ts';

/** The text formats, and the SVG the dashboard shows (drawn by Graphviz in WebAssembly: no `dot` binary needed). */
const FORMATS = [...CHART_FORMATS, 'svg'] as const;

export const usage = `usage: watchdog chart [--format ${FORMATS.join('|')}] [--view ${CHART_VIEWS.join('|')}] [--out FILE]
  Renders the instance statechart from the machine itself (machines/instance.ts).
  --format, -f   mermaid (default: a stateDiagram-v2), dot (Graphviz), json (states and transitions) or svg
                 (the drawing the dashboard shows at /statechart.svg)
  --view         developer (default: every region, state and transition as the machine names them) or operator
                 (the server's life in plain words, as the dashboard shows it first)
  --out, -o      write to FILE instead of standard output`;

export const options = {
  format: { type: 'string', short: 'f' },
  view: { type: 'string' },
  out: { type: 'string', short: 'o' },
} as const satisfies CommandOptions;

export async function run(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, options, usage, 0);
  const format = values.format ?? 'mermaid';
  if (!(FORMATS as readonly string[]).includes(format))
    throw new UsageError(`unknown format "${format}"; choose one of ${FORMATS.join(', ')}\n${usage}`);
  const view = values.view ?? 'developer';
  if (!isChartView(view))
    throw new UsageError(`unknown view "${view}"; choose one of ${CHART_VIEWS.join(', ')}\n${usage}`);
  const text =
    format === 'svg' ? `${await renderChartSvg(undefined, view)}\n` : renderChart(format as ChartFormat, view);
  if (values.out === undefined) {
    process.stdout.write(text);
    return 0;
  }
  const out = resolve(values.out);
  try {
    await makeDir(dirname(out));
    await writeFile(out, text);
  } catch (err) {
    const why = `${describeError(err)}; check the folder exists and is writable`;
    throw new ClientError(`cannot write ${out}: ${why}`, 1, { cause: err });
  }
  process.stderr.write(`watchdog chart: wrote the ${view} chart as ${format} to ${out}\n`);
  return 0;
}
