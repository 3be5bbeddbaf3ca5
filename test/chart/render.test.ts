import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { and, not, setup } from 'xstate';
import { instanceMachine } from '../../machines/instance.ts';
import { chartGraph, guardText, statePaths } from '../../src/chart/graph.ts';
import { mermaidNodeId, renderChart } from '../../src/chart/render.ts';
import { STATUS_PATHS } from './_support/state-paths.ts';

// --- the graph read from the machine

const graph = suite('chart graph');

graph('chart :: every state of the machine, with its kind and initial child, named as the status shows it', () => {
  const g = chartGraph();
  assert.is(g.id, 'instance');
  assert.is(g.initial, 'stopped.idle');
  const paths = g.states.map((s) => s.path);
  assert.equal(paths, [
    '',
    'lifecycle',
    'stopped',
    'stopped.idle',
    'stopped.failing',
    'decide',
    'updating',
    'server',
    'server.starting',
    'server.running',
    'server.awaiting-checkin',
    'server.stopping',
    'restarting',
    'restarting.backoff',
    'restarting.blocked',
    'rolling-back',
    'restoring',
    'exited',
    'operatorStop',
    'operatorStop.remembered',
    'operatorStop.none',
    'operatorStop.stopped',
    'operatorStop.off',
    'updateCheck',
    'updateCheck.idle',
    'updateCheck.queued',
    'updateCheck.running',
    'updateCheck.running.once',
    'updateCheck.running.again',
    'updateCheck.off',
    'maintenance',
    'maintenance.action',
    'maintenance.action.idle',
    'maintenance.action.pending',
    'maintenance.action.pending.choosing',
    'maintenance.action.pending.on-hold',
    'maintenance.action.pending.waiting',
    'maintenance.action.pending.waiting.RoundEnd',
    'maintenance.action.pending.waiting.RoundEnd.asking',
    'maintenance.action.pending.waiting.RoundEnd.asked',
    'maintenance.action.pending.waiting.Empty',
    'maintenance.action.pending.waiting.Empty.polling',
    'maintenance.action.pending.waiting.Empty.resting',
    'maintenance.action.carrying-out',
    'maintenance.action.forced',
    'maintenance.action.off',
    'maintenance.hold',
    'maintenance.hold.free',
    'maintenance.hold.held',
    'maintenance.hold.off',
  ]);
  const by = new Map(g.states.map((s) => [s.path, s]));
  assert.is(by.get('')?.kind, 'parallel', 'the server and its update checks are regions of one machine');
  assert.is(by.get('stopped')?.parent, 'lifecycle');
  assert.is(by.get('updateCheck.queued')?.transient, false, 'a guarded always may wait');
  assert.is(by.get('server')?.initial, 'server.starting');
  assert.is(by.get('server.running')?.parent, 'server');
  assert.is(by.get('server.stopping')?.parent, 'server');
  assert.is(by.get('decide')?.transient, true);
  assert.is(by.get('exited')?.kind, 'final');
  assert.is(by.get('stopped.idle')?.parent, 'stopped');
  assert.is(by.get('maintenance')?.kind, 'parallel', 'maintenance: its action and its hold side by side');
  assert.is(by.get('maintenance.action.pending.choosing')?.transient, true);
});

graph('chart :: always edges, which toDirectedGraph omits, are all there in priority order', () => {
  const decide = chartGraph().edges.filter((e) => e.source === 'decide');
  assert.equal(decide.length, (instanceMachine.root.states.lifecycle?.states.decide?.always ?? []).length);
  assert.ok(decide.every((e) => e.kind === 'always'));
  assert.equal(decide[0], {
    source: 'decide',
    target: 'exited',
    event: '',
    kind: 'always',
    delay: null,
    guard: 'shuttingDown',
    internal: false,
    label: 'always [shuttingDown]',
  });
  assert.is(decide.at(-1)?.label, 'always', 'the last one is the unguarded fallback');
  assert.is(decide.at(-1)?.target, 'server');
  assert.is(decide.find((e) => e.target === 'restarting.backoff')?.guard, 'crashLoop');
});

graph('chart :: delayed edges carry their delay name; actor results read as done/error', () => {
  const edges = chartGraph().edges;
  const after = edges.filter((e) => e.kind === 'after').map((e) => `${e.source} ${e.delay} ${e.target}`);
  assert.equal(after, [
    'server.starting checkinTimeout server.stopping',
    'server.running degradedAfter server.awaiting-checkin',
    'server.awaiting-checkin hangAfter server.stopping',
    'restarting.backoff backoff decide',
    'restarting.blocked blockedBackoff decide',
    'maintenance.action.pending.waiting maintenanceDeadline maintenance.action.forced',
    'maintenance.action.pending.waiting.Empty.resting playerPoll maintenance.action.pending.waiting.Empty.polling',
    'maintenance.hold.held holdEnds maintenance.hold.free',
  ]);
  const done = edges.find((e) => e.source === 'updating' && e.kind === 'done');
  assert.is(done?.label, 'update done');
  const failed = edges.filter((e) => e.source === 'rolling-back' && e.kind === 'error').map((e) => e.label);
  assert.equal(failed, ['rollback error [rollbackRequested]', 'rollback error']);
  const internal = edges.find((e) => e.source === '' && e.event === 'CONFIG');
  assert.equal([internal?.internal, internal?.target], [true, '']);
});

// 49 since the update checks became a region of their own (idle, queued, running, off); 84 since maintenance became
// a region (35 of them: requests, holds, the restored plan); 90 since a backup can be restored (RESTORE from a
// stopped and a running server, its outcomes, and the rollback's data); 96 since the operator's stop became a region
// (a remembered stop or none, STOP, a later STOP, RESUMED, SHUTDOWN); 97 since the first check-in's time runs from
// the spawn (PROCESS_STARTED re-enters starting).
graph('chart :: the statechart stays small: at most 97 transitions', () => {
  assert.ok(chartGraph().edges.length <= 97, `${chartGraph().edges.length} transitions`);
});

graph('chart :: guards read as text, combinators included', () => {
  const m = setup({ guards: { a: () => true, b: () => false } }).createMachine({
    initial: 'x',
    states: {
      x: {
        on: {
          GO: [
            { guard: and(['a', not('b')]), target: 'y' },
            { guard: 'a', target: 'y' },
          ],
        },
      },
      y: {},
    },
  });
  const labels = chartGraph(m).edges.map((e) => e.label);
  assert.equal(labels, ['GO [a and not b]', 'GO [a]']);
  assert.is(guardText({ type: 'named' }), 'named');
});

graph.run();

// --- what the dashboard uses

const paths = suite('chart state paths');

paths('chart :: state paths are the leaves a status can show, decide excluded', () => {
  assert.equal(statePaths(), STATUS_PATHS);
});

paths('chart :: every state path has a Mermaid node that the chart declares', () => {
  const mermaid = renderChart('mermaid');
  for (const p of statePaths()) {
    const id = mermaidNodeId(p);
    assert.match(id, /^[A-Za-z0-9_]+$/);
    assert.ok(mermaid.includes(`state "${p}" as ${id}\n`), `${p} is declared as ${id}`);
  }
  assert.is(mermaidNodeId('awaiting-checkin'), 'awaiting_checkin');
  assert.is(mermaidNodeId(''), 'any_state');
});

paths.run();

// --- the three formats

const formats = suite('chart formats');

formats('chart :: Mermaid draws every edge once, root edges from "any state", the final state to [*]', () => {
  const text = renderChart('mermaid');
  const lines = text.split('\n');
  assert.is(lines[0], 'stateDiagram-v2');
  const arrows = lines.filter((l) => / --> /.test(l));
  // one per edge, plus the initial marker and one per final state (the server's exited, the operator's stop's, the
  // checks' and the maintenance regions' off)
  assert.is(arrows.length, chartGraph().edges.length + 6);
  assert.ok(lines.includes('  updateCheck_off --> [*]'));
  assert.ok(lines.includes('  [*] --> stopped_idle'));
  assert.ok(lines.includes('  exited --> [*]'));
  assert.ok(lines.includes('  lifecycle --> exited: SHUTDOWN'));
  assert.ok(lines.includes('  any_state --> any_state: CONFIG'));
  assert.ok(lines.includes('  server_running --> server_awaiting_checkin: after degradedAfter'));
  assert.ok(lines.includes('  decide --> stopped_failing: always [giveUp]'));
});

formats('chart :: DOT groups compound states in clusters and quotes every id', () => {
  const text = renderChart('dot');
  assert.match(text, /^digraph "instance" \{\n/);
  assert.match(
    text,
    /subgraph "cluster_stopped" \{\n\s+label=<<b>stopped<\/b>>;[^\n]*\n\s+"stopped.idle" \[label=<idle>\];/,
  );
  assert.match(text, /subgraph "cluster_server" \{/);
  assert.match(text, /"decide" \[label=<decide>, shape=diamond/);
  assert.match(text, /"exited" \[label=<exited[^\n]*shape=doublecircle\];/);
  assert.match(text, /subgraph "cluster_updateCheck" \{/);
  assert.match(text, /"server.awaiting-checkin" -> "server.stopping" \[label="after hangAfter"/);
  assert.ok(text.trimEnd().endsWith('}'));
  const open = (text.match(/\{/g) ?? []).length;
  const close = (text.match(/\}/g) ?? []).length;
  assert.is(open, close);
});

formats('chart :: DOT arrows join states, never cluster names or a state to itself; a legend names the colours', () => {
  const text = renderChart('dot');
  const g = chartGraph();
  const compound = new Set(g.states.filter((s) => s.kind === 'compound' && s.path !== '').map((s) => s.path));
  const arrows = [...text.matchAll(/^ {2}"([^"]+)" -> "([^"]+)"/gm)].map((m): [string, string] => [
    m[1] ?? '',
    m[2] ?? '',
  ]);
  assert.ok(arrows.length > 20);
  for (const [tail, head] of arrows) {
    assert.not.ok(compound.has(tail) || compound.has(head), `${tail} -> ${head} names a cluster`);
    assert.is.not(tail, head, 'no self-loops: what stays in a state is listed in it');
  }
  // PROCESS_EXITED (and PROCESS_BLOCKED) are declared once, on server: one arrow leaving the server cluster.
  assert.match(
    text,
    /-> "decide" \[label="PROCESS_EXITED \[currentLaunch\]\nPROCESS_BLOCKED \[currentLaunch\]"[^\n]*ltail="cluster_server"/,
  );
  assert.match(text, /"updateCheck.running.again" \[label=<again<br\/>[^\n]*UPDATE_CHECK/);
  assert.match(text, /subgraph "cluster_legend"/);
  for (const meaning of ['an event', 'an actor finished', 'a timer ran out', 'taken at once'])
    assert.match(text, meaning);
});

formats('chart :: DOT draws parallel transitions as one arrow that keeps every label', () => {
  const text = renderChart('dot');
  const arrows = [...text.matchAll(/^ {2}("[^"]+") -> ("[^"]+") \[label="(?:[^"\\]|\\.)*", ([^\]]*)\];$/gm)];
  assert.ok(arrows.length > 20);
  const ends = arrows.map(([, tail, head, attributes]) => `${tail} -> ${head} ${attributes}`);
  assert.is(new Set(ends).size, ends.length, 'one arrow per tail, head, clusters and kind');
  const drawn = chartGraph().edges.filter((e) => !e.internal && e.source !== e.target);
  for (const e of drawn) assert.ok(text.includes(e.label), e.label);
});

formats('chart :: DOT draws a parallel state as a cluster holding its regions, whose states keep their labels', () => {
  const text = renderChart('dot');
  assert.match(text, /subgraph "cluster_maintenance" \{\n\s+label=[^\n]*\n\s+subgraph "cluster_maintenance.action" \{/);
  assert.not.match(text, /^\s*"maintenance" \[/m, 'not drawn as a leaf');
  assert.match(text, /"maintenance.action.pending.on-hold" \[label=<on-hold<br\/>[^\n]*SERVER_GONE \[pendingUpdate\]/);
});

formats('chart :: JSON is the graph as data', () => {
  const parsed = JSON.parse(renderChart('json')) as ReturnType<typeof chartGraph>;
  assert.equal(parsed, chartGraph());
  // The maintenance region is in the chart, with its hold beside it.
  const paths = parsed.states.map((s) => s.path);
  for (const p of ['maintenance.action.pending.waiting.RoundEnd', 'maintenance.action.forced', 'maintenance.hold.held'])
    assert.ok(paths.includes(p), `${p} is charted`);
  assert.ok(
    parsed.edges.some(
      (e) => e.source === 'maintenance.hold.free' && e.event === 'HOLD' && e.target === 'maintenance.hold.held',
    ),
    'HOLD holds',
  );
});

formats.run();
