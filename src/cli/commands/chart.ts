import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { describeError } from '../../errors.ts';
import { CHART_FORMATS, isChartFormat, renderChart } from '../../chart/render.ts';
import type { CommandOptions } from '../registry.ts';

const USAGE = `usage: watchdog chart [--format ${CHART_FORMATS.join('|')}] [--out FILE]
  Renders the instance statechart from the machine itself (machines/instance.ts).
  --format, -f   mermaid (default: a stateDiagram-v2), dot (Graphviz) or json (states and transitions)
  --out, -o      write to FILE instead of standard output
`;

export const usage = USAGE;
export const options = {
  format: { type: 'string', short: 'f' },
  out: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies CommandOptions;

/** `watchdog chart [--format mermaid|dot|json] [--out FILE]`. Exit 0 ok, 1 the file could not be written, 2 usage. */
export async function run(args: string[]): Promise<number> {
  let values: { format?: string; out?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options,
    }));
  } catch (err) {
    process.stderr.write(`watchdog chart: ${describeError(err)}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const format = values.format ?? 'mermaid';
  if (!isChartFormat(format)) {
    process.stderr.write(
      `watchdog chart: unknown format "${format}"; choose one of ${CHART_FORMATS.join(', ')}\n${USAGE}`,
    );
    return 2;
  }
  const text = renderChart(format);
  if (values.out === undefined) {
    process.stdout.write(text);
    return 0;
  }
  const out = resolve(values.out);
  try {
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, text);
  } catch (err) {
    process.stderr.write(
      `watchdog chart: cannot write ${out}: ${describeError(err)}; check the folder exists and is writable\n`,
    );
    return 1;
  }
  process.stderr.write(`watchdog chart: wrote ${format} to ${out}\n`);
  return 0;
}
