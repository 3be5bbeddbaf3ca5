/**
 * Where each transition is drawn in DOT. Graphviz joins nodes only, so one from or into a compound state is drawn
 * from or to a leaf inside it, clipped at the cluster's border (`ltail`/`lhead`). One on a compound state into its
 * own child (`server` → `server.running`) is drawn from each sibling it leaves, and listed in the state it re-enters.
 */
import { type ChartEdge, type ChartGraph, type ChartState, within } from './graph.ts';

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

const kindOf = (e: ChartEdge): DrawnKind => (e.kind === 'done' || e.kind === 'error' ? 'result' : e.kind);

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
  const add = (d: DrawnEdge) => {
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
    const kind = kindOf(e);
    const head = end(e.target);
    if (e.source === '' || !within(graph, e.target, e.source) || e.source === e.target) {
      const tail = end(e.source, head.node);
      add({ tail: tail.node, head: head.node, ltail: tail.cluster, lhead: head.cluster, label: e.label, kind });
      continue;
    }
    // Into itself: from every child it leaves (those not holding the target), and a loop on an atomic target.
    for (const child of graph.states.filter((s) => s.parent === e.source)) {
      if (within(graph, e.target, child.path)) continue;
      const tail = end(child.path, head.node);
      add({ tail: tail.node, head: head.node, ltail: tail.cluster, lhead: head.cluster, label: e.label, kind });
    }
    if (head.cluster === null)
      add({ tail: head.node, head: head.node, ltail: null, lhead: null, label: e.label, kind });
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
