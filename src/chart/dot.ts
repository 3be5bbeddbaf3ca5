/**
 * Where each transition is drawn in DOT. Graphviz joins nodes only, so one from or into a compound state is drawn
 * from or to a leaf inside it, clipped at the cluster's border (`ltail`/`lhead`). One on a compound state into its
 * own child (`server` → `server.running`) is drawn from each sibling it leaves, and listed in the state it re-enters.
 */
import { type ChartGraph, type ChartState, within } from './graph.ts';

export type DrawnKind = 'event' | 'result' | 'after' | 'always';

export interface DrawnEdge {
  tail: string;
  head: string;
  /** The compound states whose cluster borders the arrow starts and ends at (tail and head are leaves inside). */
  ltail: string | null;
  lhead: string | null;
  label: string;
  kind: DrawnKind;
}

/** The colour of each kind of arrow, and what the legend says it means. */
export const EDGE_STYLE: Record<DrawnKind, { color: string; meaning: string }> = {
  event: { color: '#212121', meaning: 'an event: a request or a fact from the server' },
  result: { color: '#1565c0', meaning: 'an actor finished (done) or failed (error)' },
  after: { color: '#ef6c00', meaning: 'a timer ran out (after)' },
  always: { color: '#7b1fa2', meaning: 'taken at once when its guard holds (always)' },
};

/** Compound and parallel states are drawn as clusters, their children inside; other states as nodes. */
export const isCluster = (s: ChartState | undefined): boolean => s?.kind === 'compound' || s?.kind === 'parallel';

/** The arrows, and per state the transitions it handles in place (no target, or self-loops Graphviz would overlap). */
export function drawnEdges(graph: ChartGraph): { edges: DrawnEdge[]; inPlace: Map<string, string[]> } {
  const byPath = new Map(graph.states.map((s) => [s.path, s]));
  // A parallel state's regions all start at once: an arrow into it points at its first region's first leaf.
  const leaf = (s: ChartState): string => {
    const first =
      s.initial !== null
        ? byPath.get(s.initial)
        : graph.states.find((c) => s.kind === 'parallel' && c.parent === s.path);
    return first ? leaf(first) : s.path;
  };
  // The end of an arrow at `path`: the state, or a leaf in its cluster. Leaving a cluster, the last leaf with an arrow
  // to the same head, so that Graphviz puts the label in the gap between them rather than across the cluster.
  const end = (path: string, head?: string): { node: string; cluster: string | null } => {
    const s = byPath.get(path);
    if (s === undefined || !isCluster(s) || path === '') return { node: path, cluster: null };
    const near = graph.edges.findLast(
      (e) =>
        e.target === head && e.source !== path && within(graph, e.source, path) && !isCluster(byPath.get(e.source)),
    );
    return { node: near?.source ?? leaf(s), cluster: path };
  };

  const inPlace = new Map<string, string[]>();
  const keep = (path: string, label: string) => inPlace.set(path, [...(inPlace.get(path) ?? []), ...label.split('\n')]);
  const merged = new Map<string, DrawnEdge>();
  const add = (from: ReturnType<typeof end>, to: ReturnType<typeof end>, label: string, kind: DrawnKind) => {
    const d = { tail: from.node, head: to.node, ltail: from.cluster, lhead: to.cluster, label, kind };
    if (d.tail === d.head && d.ltail === null && d.lhead === null) return keep(d.tail, d.label);
    const k = JSON.stringify([d.tail, d.head, d.ltail, d.lhead, d.kind]);
    const prev = merged.get(k);
    merged.set(k, prev ? { ...prev, label: `${prev.label}\n${d.label}` } : d);
  };
  for (const e of graph.edges) {
    if (e.internal) {
      keep(e.source, e.label);
      continue;
    }
    const kind = e.kind === 'done' || e.kind === 'error' ? 'result' : e.kind;
    const head = end(e.target);
    if (e.source === '' || !within(graph, e.target, e.source) || e.source === e.target) {
      add(end(e.source, head.node), head, e.label, kind);
      continue;
    }
    // Into itself: from every child it leaves (those not holding the target), and a loop on an atomic target.
    for (const child of graph.states.filter((s) => s.parent === e.source)) {
      if (!within(graph, e.target, child.path)) add(end(child.path, head.node), head, e.label, kind);
    }
    if (head.cluster === null) add(head, head, e.label, kind);
  }
  return { edges: fromAnyChild(graph, [...merged.values()]), inPlace };
}

/** Arrows alike from every other child of a compound state become one, labelled so, not several stacked curves. */
function fromAnyChild(graph: ChartGraph, edges: DrawnEdge[]): DrawnEdge[] {
  const byPath = new Map(graph.states.map((s) => [s.path, s]));
  const groups = new Map<string, DrawnEdge[]>();
  for (const e of edges) {
    const k = JSON.stringify([e.head, e.lhead, e.label, e.kind, e.ltail]);
    groups.set(k, [...(groups.get(k) ?? []), e]);
  }
  return [...groups.values()].flatMap((alike) => {
    const [first] = alike;
    const last = alike.at(-1);
    const parent = first && byPath.get(first.tail)?.parent;
    const compound = parent ? byPath.get(parent) : undefined;
    if (!first || !last || alike.length < 2 || !compound || alike.some((e) => e.ltail !== null)) return alike;
    const tails = new Set(alike.map((e) => e.tail));
    const others = graph.states.filter((s) => s.parent === compound.path && s.path !== first.head);
    if (!others.every((s) => tails.has(s.path) && s.kind !== 'compound') || tails.size !== others.length) return alike;
    return [{ ...last, label: `${first.label}\n(from any state of ${compound.name})` }];
  });
}

/** The chart in Graphviz DOT: compound and parallel states as clusters, the machine's own transitions from "any state". */
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
