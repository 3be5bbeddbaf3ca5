/** The chart module's public surface: the graph data, its renderings, and the state-path helpers the dashboard uses. */

export { toDot } from './dot.ts';
export {
  type ChartEdge,
  type ChartGraph,
  type ChartState,
  chartGraph,
  type EdgeKind,
  guardText,
  statePaths,
} from './graph.ts';
export { type MermaidOptions, mermaidNodeId, toMermaid } from './mermaid.ts';
export {
  CHART_VIEWS,
  type ChartView,
  HIDDEN_REGIONS,
  isChartView,
  OPERATOR_STATES,
  OPERATOR_WORDS,
  operatorGraph,
  operatorLabel,
  unmappedParts,
} from './operator.ts';
export { CHART_FORMATS, type ChartFormat, isChartFormat, renderChart } from './render.ts';
