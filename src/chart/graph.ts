/** The instance statechart as plain data, read from the machine itself: its states and every transition. */
import { type AnyStateMachine, type AnyStateNode, type AnyTransitionDefinition, and, not, or } from 'xstate';
import { type DirectedGraphNode, toDirectedGraph } from 'xstate/graph';
import { instanceMachine } from '../../machines/instance.ts';

export interface ChartState {
  /** Dotted, as the status shows it (`stopped.idle`, `updateCheck.running.once`); `''` is the machine itself. */
  path: string;
  /** Its own key; the machine id for the root. */
  name: string;
  parent: string | null;
  /** `parallel`: the machine itself, whose regions (`server`, `updateCheck`) are active together. */
  kind: 'atomic' | 'compound' | 'parallel' | 'final';
  initial: string | null;
  /** A state left at once by `always` transitions; never shown as the active state. */
  transient: boolean;
}

export interface ChartEdge {
  source: string;
  target: string;
  /** The event type as XState names it (`''` for `always`). */
  event: string;
  kind: 'event' | 'after' | 'always' | 'done' | 'error';
  /** The named delay of an `after` edge. */
  delay: string | null;
  guard: string | null;
  /** No target: actions only, the state is neither left nor re-entered. */
  internal: boolean;
  /** Short text for a diagram: `CHECKIN [currentLaunch]`, `after checkinTimeout`, `update done`. */
  label: string;
}

export interface ChartGraph {
  id: string;
  /** The leaf the machine starts in. */
  initial: string;
  states: ChartState[];
  edges: ChartEdge[];
}

/** The status shows the path in the `lifecycle` region; the other regions' states are told apart by their key. */
const LIFECYCLE = 'lifecycle';
const pathOf = (node: AnyStateNode): string =>
  (node.path[0] === LIFECYCLE && node.path.length > 1 ? node.path.slice(1) : node.path).join('.');

/** xstate's guard combinators, told by their `check`: a bundler renames functions (esbuild made `and` `and2`). */
const checkOf = (guard: unknown): unknown => (guard as { check?: unknown }).check;
const COMBINATORS = new Map<unknown, 'and' | 'or' | 'not'>([
  [checkOf(and([])), 'and'],
  [checkOf(or([])), 'or'],
  [checkOf(not('')), 'not'],
]);

/** `and([a, b])` → `a and b`; `not(a)` → `not a`; a named guard → its name. */
export function guardText(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const parts = (guard as { guards?: unknown[] }).guards;
    const combinator = COMBINATORS.get(checkOf(guard));
    if (combinator && Array.isArray(parts)) {
      if (combinator === 'not') return `not ${guardText(parts[0])}`;
      return parts.map(guardText).join(` ${combinator} `);
    }
    return guard.name || 'guard';
  }
  if (guard && typeof guard === 'object' && 'type' in guard) return String((guard as { type: unknown }).type);
  return 'guard';
}

function describe(event: string, source: AnyStateNode): Pick<ChartEdge, 'kind' | 'delay' | 'label'> {
  if (event === '') return { kind: 'always', delay: null, label: 'always' };
  // The state's own timers, as the machine declares them (their event names are xstate's to choose).
  const after = source.after.find((t) => t.eventType === event);
  if (after !== undefined) {
    const delay = String(after.delay);
    return { kind: 'after', delay, label: `after ${delay}` };
  }
  const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event);
  if (actor?.[1] && actor[2])
    return { kind: actor[1] === 'done' ? 'done' : 'error', delay: null, label: `${actor[2]} ${actor[1]}` };
  return { kind: 'event', delay: null, label: event };
}

function edge(source: AnyStateNode, t: AnyTransitionDefinition, target: AnyStateNode): ChartEdge {
  const event = t.eventType ?? '';
  const d = describe(event, source);
  const guard = t.guard === undefined ? null : guardText(t.guard);
  return {
    source: pathOf(source),
    target: pathOf(target),
    event,
    ...d,
    guard,
    internal: !t.target,
    label: guard ? `${d.label} [${guard}]` : d.label,
  };
}

/** Descends through initial children (a parallel state's first region) to the leaf a transition into `node` lands in. */
function initialLeaf(node: AnyStateNode): AnyStateNode {
  const first =
    node.type === 'compound'
      ? node.initial.target[0]
      : node.type === 'parallel'
        ? Object.values(node.states)[0]
        : undefined;
  return first ? initialLeaf(first) : node;
}

export function chartGraph(machine: AnyStateMachine = instanceMachine): ChartGraph {
  const states: ChartState[] = [];
  const edges: ChartEdge[] = [];
  const visit = (g: DirectedGraphNode) => {
    const node = g.stateNode;
    const initial = node.type === 'compound' ? node.initial.target[0] : undefined;
    states.push({
      path: pathOf(node),
      name: node.key,
      parent: node.parent ? pathOf(node.parent) : null,
      kind: node.type === 'final' || node.type === 'compound' || node.type === 'parallel' ? node.type : 'atomic',
      initial: initial ? pathOf(initial) : null,
      // Left at once: an unguarded `always` (a guarded one, as `updateCheck.queued` has, may wait).
      transient: node.type === 'atomic' && (node.always ?? []).some((t) => t.guard === undefined),
    });
    for (const e of g.edges) edges.push(edge(node, e.transition, e.target));
    // toDirectedGraph leaves out `always` transitions.
    for (const t of node.always ?? []) for (const target of t.target ?? [node]) edges.push(edge(node, t, target));
    g.children.forEach(visit);
  };
  visit(toDirectedGraph(machine));
  return { id: machine.id, initial: pathOf(initialLeaf(machine.root)), states, edges };
}

/** The dotted paths a status can show: every leaf of the `lifecycle` region except transient ones, in chart order. */
export function statePaths(graph: ChartGraph = chartGraph()): string[] {
  const byPath = new Map(graph.states.map((s) => [s.path, s]));
  const inServer = (s: ChartState): boolean =>
    s.parent === LIFECYCLE || (s.parent !== null && inServer(byPath.get(s.parent) ?? s));
  return graph.states
    .filter((s) => (s.kind === 'atomic' || s.kind === 'final') && !s.transient && inServer(s))
    .map((s) => s.path);
}

/** Whether state `path` is `ancestor` or lies below it. */
export function within(graph: ChartGraph, path: string, ancestor: string): boolean {
  const byPath = new Map(graph.states.map((x) => [x.path, x]));
  for (let p: string | null | undefined = path; p != null; p = byPath.get(p)?.parent) if (p === ancestor) return true;
  return false;
}
