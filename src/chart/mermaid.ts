/**
 * Mermaid `stateDiagram-v2` of the chart: leaves drawn flat under their dotted names (Mermaid cannot draw transitions
 * between composite states), coloured by top-level group; the machine's own transitions leave an "any state" node.
 */
import type { ChartGraph, ChartState } from './graph.ts';

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
