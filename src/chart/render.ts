import type { Logger } from '../log.ts';
import { toDot } from './dot.ts';
import { chartGraph } from './graph.ts';
import { toMermaid } from './mermaid.ts';
import { type ChartView, OPERATOR_LEGEND, operatorGraph } from './operator.ts';

export const CHART_FORMATS = ['mermaid', 'dot', 'json'] as const;
export type ChartFormat = (typeof CHART_FORMATS)[number];

export function renderChart(format: ChartFormat, view: ChartView = 'developer'): string {
  const graph = view === 'operator' ? operatorGraph() : chartGraph();
  if (format === 'mermaid') return toMermaid(graph);
  if (format === 'dot') return toDot(graph, view === 'operator' ? OPERATOR_LEGEND : undefined);
  return JSON.stringify(graph, null, 2) + '\n';
}

/** The id of a state's node in the SVG: `state:` + its dotted path (`state:stopped.idle`). */
export const NODE_ID_PREFIX = 'state:';

/** Drops the XML prolog and the fixed size, so the SVG can be inlined and scaled by CSS (its viewBox stays). */
function inlineable(svg: string): string {
  return svg.replace(/^[\s\S]*?(?=<svg\b)/, '').replace(/<svg\b([^>]*?)\swidth="[^"]*"\s+height="[^"]*"/, '<svg$1');
}

/** As SVG by Graphviz in WebAssembly. viz-js 3.31 sends diagnostics to `console.error`: they go to `log` instead. */
export async function renderChartSvg(log?: Logger, view: ChartView = 'developer'): Promise<string> {
  // Loaded on first use: the module carries Graphviz as ~1 MB of wasm, which a daemon nobody looks at need not hold.
  const { instance } = await import('@viz-js/viz');
  const viz = await instance();
  const dot = renderChart('dot', view);
  const original = console.error;
  const diagnostics: string[] = [];
  console.error = (...args: unknown[]) => void diagnostics.push(args.map(String).join(' '));
  let result: ReturnType<typeof viz.render>;
  try {
    result = viz.render(dot, { format: 'svg', nodeAttributes: { id: `${NODE_ID_PREFIX}\\N` } });
  } finally {
    console.error = original;
  }
  for (const d of [...diagnostics, ...result.errors.map((e) => e.message)]) log?.debug(`graphviz: ${d}`);
  if (result.status !== 'success' || result.output === undefined) {
    throw new Error(
      `cannot render the statechart as SVG: ${result.errors.map((e) => e.message).join('; ') || 'Graphviz failed'}`,
    );
  }
  return inlineable(result.output);
}

/** Renders each view on first use and keeps the text (the Graphviz instance, several MB of wasm memory, is let go). */
export function cachedChartSvg(log?: Logger): (view: ChartView) => Promise<string> {
  const svgs = new Map<ChartView, Promise<string>>();
  return (view) => {
    let svg = svgs.get(view);
    if (svg === undefined) {
      svg = renderChartSvg(log, view).catch((err: unknown) => {
        svgs.delete(view);
        throw err;
      });
      svgs.set(view, svg);
    }
    return svg;
  };
}
