import type { Logger } from '../log.ts';
import { toDot } from './dot.ts';
import { type ChartGraph, type ChartState, chartGraph } from './graph.ts';
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
  // Without the XML prolog and the fixed size, the SVG can be inlined and scaled by CSS (its viewBox stays).
  return result.output
    .replace(/^[\s\S]*?(?=<svg\b)/, '')
    .replace(/<svg\b([^>]*?)\swidth="[^"]*"\s+height="[^"]*"/, '<svg$1');
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

const ANY = 'any_state';

/** The Mermaid node id of a state path: `stopped.idle` → `stopped_idle`, `''` (the machine) → `any_state`. */
export function mermaidNodeId(path: string): string {
  return path === '' ? ANY : path.replace(/[^A-Za-z0-9]/g, '_');
}

const GROUP_STYLES: Record<string, string> = {
  stopped: 'fill:#eceff1,stroke:#607d8b',
  decide: 'fill:#f3e5f5,stroke:#7b1fa2',
  updating: 'fill:#e3f2fd,stroke:#1e88e5',
  server: 'fill:#c8e6c9,stroke:#2e7d32',
  restarting: 'fill:#fbe9e7,stroke:#e64a19',
  'rolling-back': 'fill:#e3f2fd,stroke:#1e88e5',
  exited: 'fill:#f5f5f5,stroke:#424242',
  updateCheck: 'fill:#fffde7,stroke:#f9a825',
};

/**
 * Mermaid `stateDiagram-v2` of the chart: leaves drawn flat under their dotted names (Mermaid cannot draw transitions
 * between composite states), coloured by top-level group; the machine's own transitions leave an "any state" node.
 */
export function toMermaid(graph: ChartGraph): string {
  const lines = [
    'stateDiagram-v2',
    `  %% Generated from machines/instance.ts by \`watchdog chart\`; do not edit by hand.`,
  ];
  const byPath = new Map(graph.states.map((s) => [s.path, s]));
  const drawn = (s: ChartState) => s.kind !== 'compound' || graph.edges.some((e) => e.source === s.path);
  const nodes = graph.states.filter((s) => s.path !== '' && drawn(s));
  if (graph.edges.some((e) => e.source === '')) lines.push(`  state "any state" as ${ANY}`);
  for (const s of nodes) lines.push(`  state "${s.path}" as ${mermaidNodeId(s.path)}`);
  lines.push(`  [*] --> ${mermaidNodeId(graph.initial)}`);
  for (const e of graph.edges) {
    const target = e.internal ? e.source : leafOf(e.target, byPath);
    lines.push(`  ${mermaidNodeId(e.source)} --> ${mermaidNodeId(target)}: ${e.label}`);
  }
  for (const s of graph.states) if (s.kind === 'final') lines.push(`  ${mermaidNodeId(s.path)} --> [*]`);
  for (const [group, style] of Object.entries(GROUP_STYLES)) {
    const members = nodes.filter((s) => s.path.split('.')[0] === group).map((s) => mermaidNodeId(s.path));
    if (members.length === 0) continue;
    const cls = mermaidNodeId(group);
    lines.push(`  classDef ${cls}_group ${style}`, `  class ${members.join(',')} ${cls}_group`);
  }
  return lines.join('\n') + '\n';
}

/** Mermaid cannot draw into an undrawn composite: a transition into one lands on its initial leaf. */
function leafOf(path: string, byPath: Map<string, ChartState>): string {
  const s = byPath.get(path);
  return s?.kind === 'compound' && s.initial ? leafOf(s.initial, byPath) : path;
}
