/** `watchdog chart`: the instance statechart rendered from the machine in one of three formats, in either view. */
import { toDot } from './dot.ts';
import { chartGraph } from './graph.ts';
import { toMermaid } from './mermaid.ts';
import { type ChartView, OPERATOR_LEGEND, viewGraph } from './operator.ts';

export const CHART_FORMATS = ['mermaid', 'dot', 'json'] as const;
export type ChartFormat = (typeof CHART_FORMATS)[number];

export function isChartFormat(value: string): value is ChartFormat {
  return (CHART_FORMATS as readonly string[]).includes(value);
}

export function renderChart(format: ChartFormat, view: ChartView = 'developer'): string {
  const graph = viewGraph(view, chartGraph());
  if (format === 'mermaid') return toMermaid(graph);
  if (format === 'dot') return view === 'operator' ? toDot(graph, OPERATOR_LEGEND) : toDot(graph);
  return JSON.stringify(graph, null, 2) + '\n';
}
