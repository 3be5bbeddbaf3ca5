/** Graphviz DOT of the chart: compound states as clusters, transitions declared on the machine from "any state". */
import type { ChartGraph, ChartState } from './graph.ts';

const q = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
const nodeId = (path: string) => q(path === '' ? '(any state)' : path);

export function toDot(graph: ChartGraph): string {
  const lines = [
    `digraph ${q(graph.id)} {`,
    '  // Generated from machines/instance.ts by `watchdog chart --format dot`; do not edit by hand.',
    '  rankdir=LR; compound=true;',
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica"];',
    '  edge [fontname="Helvetica", fontsize=10];',
    '  "__initial" [shape=point, width=0.15, label=""];',
  ];
  if (graph.edges.some((e) => e.source === '')) lines.push(`  ${nodeId('')} [shape=plaintext, style=""];`);
  const children = (parent: string) => graph.states.filter((s) => s.parent === parent);
  const emit = (s: ChartState, indent: string) => {
    if (s.kind === 'compound') {
      lines.push(`${indent}subgraph ${q(`cluster_${s.path}`)} {`, `${indent}  label=${q(s.name)}; style=rounded;`);
      for (const c of children(s.path)) emit(c, `${indent}  `);
      lines.push(`${indent}}`);
      return;
    }
    const attrs = [`label=${q(s.name)}`];
    if (s.kind === 'final') attrs.push('shape=doublecircle');
    if (s.transient) attrs.push('shape=diamond');
    lines.push(`${indent}${nodeId(s.path)} [${attrs.join(', ')}];`);
  };
  for (const s of children('')) emit(s, '  ');
  lines.push(`  "__initial" -> ${nodeId(graph.initial)};`);
  const compound = new Set(graph.states.filter((s) => s.kind === 'compound' && s.path !== '').map((s) => s.path));
  for (const e of graph.edges) {
    const attrs = [`label=${q(e.label)}`];
    if (e.internal) attrs.push('style=dashed');
    if (e.kind === 'after') attrs.push('color="#f57c00"');
    if (e.kind === 'always') attrs.push('color="#7b1fa2"');
    // An edge into a cluster is drawn to its initial child, clipped at the cluster border.
    const target = compound.has(e.target) ? (graph.states.find((s) => s.path === e.target)?.initial ?? e.target) : e.target;
    if (target !== e.target) attrs.push(`lhead=${q(`cluster_${e.target}`)}`);
    lines.push(`  ${nodeId(e.source)} -> ${nodeId(target)} [${attrs.join(', ')}];`);
  }
  lines.push('}');
  return lines.join('\n') + '\n';
}
