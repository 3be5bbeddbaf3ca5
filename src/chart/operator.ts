/**
 * The operator's view of the chart: the `lifecycle` region in plain words, the card's buttons capitalised. The two
 * tables below are the one place that names states and transitions for an operator; a test fails when one is missing.
 */
import { type ChartEdge, type ChartGraph, type ChartState, chartGraph, within } from './graph.ts';

/** The region the operator's view draws; its key is dropped from the paths, as the status drops it. */
export const OPERATOR_REGION = 'lifecycle';

/** Every state of the `lifecycle` region (status path → the name an operator reads), compound ones included. */
export const OPERATOR_STATES: Readonly<Record<string, string>> = {
  stopped: 'Stopped',
  'stopped.idle': 'stopped: starts when asked',
  'stopped.failing': 'gave up: it kept failing to start',
  decide: 'watchdog decides',
  updating: 'installing an update',
  server: 'Server process',
  'server.starting': 'starting: waits for its first check-in',
  'server.running': 'running',
  'server.awaiting-checkin': 'check-in overdue',
  'server.stopping': 'stopping',
  restarting: 'Waiting to launch again',
  'restarting.backoff': 'backing off after crashes',
  'restarting.blocked': 'launch blocked: no resources or port',
  'rolling-back': 'rolling back to the previous build',
  restoring: 'restoring a backup of the data',
  exited: 'watchdog shut down',
};

/** The machine's other regions, and where an operator sees them instead of in the drawing. */
export const HIDDEN_REGIONS: Readonly<Record<string, string>> = {
  operatorStop: 'the card\'s "stopped by … at …" line, and its Start button that ends the stop',
  updateCheck: "the card's maintenance line and the update progress bar",
  maintenance: "the card's maintenance line (what waits, for what, forced when) and its Hold/Release button",
};

/** Each transition of the region in words, keyed by its developer label; `null`: bookkeeping, not drawn. */
export const OPERATOR_WORDS: Readonly<Record<string, string | null>> = {
  STOP: 'Stop',
  SHUTDOWN: 'the watchdog stops',
  RESTART: 'Restart',
  ROLLBACK: 'Rollback',
  RESTORE: 'Restore',
  'START [not operatorStopped]': 'Start',
  ADOPT: 'found running at watchdog start',
  'UPDATE_FOUND [not operatorStopped]': 'an update was found (not while an operator stopped it)',
  'always [shuttingDown]': 'the watchdog is stopping',
  'always [stopRequested]': 'a Stop was asked',
  'always [rollbackRequested]': 'a Rollback was asked',
  'always [restoreRequested]': 'a Restore was asked',
  'always [launchBlocked]': 'the launch was blocked',
  'always [giveUp]': 'too many failed starts',
  'always [crashLoop]': 'crashing in a loop',
  'always [updatePending and not installHeld]': 'an update waits to be installed',
  always: 'otherwise: launch',
  'update done': 'installed',
  'update error': 'install failed',
  'PROCESS_STARTED [currentLaunch]': null,
  'PROCESS_EXITED [currentLaunch]': 'the server exited',
  'PROCESS_BLOCKED [currentLaunch]': 'the launch was blocked',
  'SHUTDOWN [graceful]': 'the watchdog stops',
  STABLE: null,
  'CHECKIN [checkinCounts]': 'check-in',
  'process error': null,
  'after checkinTimeout': 'no first check-in in time: killed',
  'after degradedAfter': 'check-in late',
  'after hangAfter': 'no check-in: hung, killed',
  'after backoff': 'back-off over',
  'after blockedBackoff': 'retry',
  'rollback done': 'rolled back',
  'rollback error [rollbackRequested]': 'rollback failed: relaunch',
  'rollback error': 'rollback failed',
  'restore done': 'restored',
  'restore error [restoreRequested]': 'restore failed: relaunch',
  'restore error': 'restore failed',
};

/** For a transition on a compound state into its own child, drawn from each other child: those its guard rules out. */
export const NEVER_FROM: Readonly<Record<string, readonly string[]>> = {
  'CHECKIN [checkinCounts]': ['server.stopping'],
};

/** What each arrow colour means, said for an operator (the developer chart's legend names xstate's terms). */
export const OPERATOR_LEGEND = {
  event: 'capitalised: a button (or the same request by CLI or API); else what the server did',
  result: 'an install or rollback finished or failed',
  after: 'a time limit ran out',
  always: 'the watchdog chose at once',
} as const;

/**
 * The region's states renamed, its transitions worded and merged per pair of states; its own hang off "any state".
 * Paths stay the machine's, so the dashboard marks an instance's state in either view the same way.
 */
export function operatorGraph(graph: ChartGraph = chartGraph()): ChartGraph {
  const asRoot = (path: string) => (path === OPERATOR_REGION ? '' : path);
  const states: ChartState[] = [
    { path: '', name: graph.id, parent: null, kind: 'parallel', initial: null, transient: false },
  ];
  const inside = new Set(graph.states.filter((s) => within(graph, s.path, OPERATOR_REGION)).map((s) => s.path));
  for (const s of graph.states) {
    if (s.path === OPERATOR_REGION || !inside.has(s.path)) continue;
    states.push({ ...s, name: OPERATOR_STATES[s.path] ?? s.path, parent: s.parent === null ? null : asRoot(s.parent) });
  }
  const merged = new Map<string, ChartEdge>();
  const add = (e: ChartEdge, words: string) => {
    const edge: ChartEdge = { ...e, source: asRoot(e.source), target: asRoot(e.target), guard: null, label: words };
    const k = JSON.stringify([edge.source, edge.target, edge.kind, edge.internal]);
    const prev = merged.get(k);
    if (!prev) merged.set(k, edge);
    else if (!prev.label.split('\n').includes(words)) merged.set(k, { ...prev, label: `${prev.label}\n${words}` });
  };
  for (const e of graph.edges) {
    if (!inside.has(e.source)) continue;
    // A transition the table does not word yet is drawn under its label (the coverage test names it).
    const words = e.label in OPERATOR_WORDS ? OPERATOR_WORDS[e.label] : e.label;
    if (words === null || words === undefined) continue;
    for (const source of sourcesOf(graph, e)) add({ ...e, source }, words);
  }
  return { id: graph.id, initial: graph.initial, states, edges: [...merged.values()] };
}

/** Its source, or for one into the source's own child, each child it can leave and the target (listed in place). */
function sourcesOf(graph: ChartGraph, e: ChartEdge): string[] {
  // The region's own transitions stay on "any state", the one node that stands for every state.
  if (e.internal || e.source === OPERATOR_REGION || e.source === e.target || !within(graph, e.target, e.source))
    return [e.source];
  const never = NEVER_FROM[e.label] ?? [];
  return graph.states
    .filter((c) => c.parent === e.source && (c.path === e.target || !within(graph, e.target, c.path)))
    .map((c) => c.path)
    .filter((p) => !never.includes(p));
}

/** The two drawings of the chart: the operator's (the dashboard's default) and the developer's (every region). */
export const CHART_VIEWS = ['operator', 'developer'] as const;
export type ChartView = (typeof CHART_VIEWS)[number];

export function isChartView(value: string): value is ChartView {
  return (CHART_VIEWS as readonly string[]).includes(value);
}
