/** Graphviz DOT of the chart: compound and parallel states as clusters, the machine's own transitions from "any state". */
import { type DrawnKind, drawnEdges, EDGE_STYLE, isCluster } from './dot-edges.ts';
import type { ChartGraph, ChartState } from './graph.ts';

const q = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
const html = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const nodeId = (path: string) => q(path === '' ? '(any state)' : path);

/** A state's name with the events it handles in place underneath, smaller (an HTML-like label). */
function titled(name: string, inPlace: string[], bold = false): string {
  const title = bold ? `<b>${html(name)}</b>` : html(name);
  if (inPlace.length === 0) return `<${title}>`;
  const lines = inPlace.map((l) => `<font point-size="9" color="#555555">${html(l)}</font>`).join('<br/>');
  return `<${title}<br/>${lines}>`;
}

/** What each arrow colour means: EDGE_STYLE's developer terms unless a view words it otherwise. */
type LegendText = Readonly<Record<DrawnKind, string>>;

function legend(kinds: Set<DrawnKind>, meanings?: LegendText): string[] {
  const rows = (Object.keys(EDGE_STYLE) as DrawnKind[])
    .filter((k) => kinds.has(k))
    // A filled cell draws the line: Graphviz's wasm build has no metrics for box-drawing characters.
    .map(
      (k) =>
        `<tr><td><table border="0" cellspacing="0" cellpadding="0"><tr><td fixedsize="true" width="28" height="3" bgcolor="${EDGE_STYLE[k].color}"></td></tr></table></td><td align="left">${html(meanings?.[k] ?? EDGE_STYLE[k].meaning)}</td></tr>`,
    );
  return [
    '  subgraph "cluster_legend" {',
    '    label="legend"; style="rounded,dashed"; color="#999999"; fontsize=10;',
    `    "legend" [shape=plaintext, style="", fontsize=10, label=<<table border="0" cellspacing="4">${rows.join('')}` +
      '<tr><td colspan="2" align="left"><font color="#555555">grey lines in a state: transitions that stay in it</font></td></tr></table>>];',
    '  }',
  ];
}

export function toDot(graph: ChartGraph, meanings?: LegendText): string {
  const lines = [
    `digraph ${q(graph.id)} {`,
    '  // Generated from machines/instance.ts by `watchdog chart --format dot`; do not edit by hand.',
    '  rankdir=LR; compound=true; newrank=true; nodesep=0.5; ranksep=0.7;',
    '  graph [fontname="Helvetica"];',
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica"];',
    '  edge [fontname="Helvetica", fontsize=10];',
    '  "__initial" [shape=point, width=0.15, label=""];',
  ];
  const { edges: drawn, inPlace } = drawnEdges(graph);
  const anyState = inPlace.has('') || drawn.some((e) => e.tail === '');
  if (anyState)
    lines.push(`  ${nodeId('')} [label=${titled('any state', inPlace.get('') ?? [], true)}, style="rounded,dashed"];`);
  const children = (parent: string) => graph.states.filter((s) => s.parent === parent);
  const emit = (s: ChartState, indent: string) => {
    if (isCluster(s)) {
      lines.push(
        `${indent}subgraph ${q(`cluster_${s.path}`)} {`,
        `${indent}  label=${titled(s.name, inPlace.get(s.path) ?? [], true)}; style=rounded; margin=16;`,
      );
      for (const c of children(s.path)) emit(c, `${indent}  `);
      lines.push(`${indent}}`);
      return;
    }
    const attrs = [`label=${titled(s.name, inPlace.get(s.path) ?? [])}`];
    if (s.kind === 'final') attrs.push('shape=doublecircle');
    if (s.transient) attrs.push('shape=diamond', 'fillcolor="#f3e5f5"');
    lines.push(`${indent}${nodeId(s.path)} [${attrs.join(', ')}];`);
  };
  for (const s of children('')) emit(s, '  ');
  lines.push(`  "__initial" -> ${nodeId(graph.initial)};`);
  for (const e of drawn) {
    const attrs = [
      `label=${q(e.label)}`,
      `color="${EDGE_STYLE[e.kind].color}"`,
      `fontcolor="${EDGE_STYLE[e.kind].color}"`,
    ];
    if (e.ltail) attrs.push(`ltail=${q(`cluster_${e.ltail}`)}`);
    if (e.lhead) attrs.push(`lhead=${q(`cluster_${e.lhead}`)}`);
    lines.push(`  ${nodeId(e.tail)} -> ${nodeId(e.head)} [${attrs.join(', ')}];`);
  }
  lines.push(...legend(new Set(drawn.map((e) => e.kind)), meanings), '}');
  return lines.join('\n') + '\n';
}
