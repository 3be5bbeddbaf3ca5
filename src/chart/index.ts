/** The chart module's public surface: the graph data, its renderings, and the state-path helpers the dashboard uses. */
export {
  chartGraph,
  guardText,
  statePaths,
  type ChartEdge,
  type ChartGraph,
  type ChartState,
  type EdgeKind,
} from './graph.ts';
export { mermaidNodeId, toMermaid, type MermaidOptions } from './mermaid.ts';
export { toDot } from './dot.ts';
export { CHART_FORMATS, isChartFormat, renderChart, type ChartFormat } from './render.ts';
