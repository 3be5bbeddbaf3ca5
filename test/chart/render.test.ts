import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { and, not, setup } from 'xstate';
import { chartGraph, guardText, mermaidNodeId, statePaths, toMermaid, renderChart } from '../../src/chart/index.ts';
import { instanceMachine } from '../../machines/instance.ts';

// --- the graph read from the machine

const graph = suite('chart graph');

graph('chart :: every state of the machine, with its kind and initial child', () => {
  const g = chartGraph();
  assert.is(g.id, 'instance');
  assert.is(g.initial, 'stopped.idle');
  const paths = g.states.map((s) => s.path);
  assert.equal(paths, ['', 'stopped', 'stopped.idle', 'stopped.failing', 'updating', 'starting', 'running',
    'awaiting-checkin', 'restarting', 'restarting.stopping', 'restarting.decide', 'restarting.backoff', 'exited']);
  const by = new Map(g.states.map((s) => [s.path, s]));
  assert.is(by.get('restarting')?.initial, 'restarting.decide');
  assert.is(by.get('restarting.decide')?.transient, true);
  assert.is(by.get('exited')?.kind, 'final');
  assert.is(by.get('stopped.idle')?.parent, 'stopped');
});

graph('chart :: always edges, which toDirectedGraph omits, are all there in priority order', () => {
  const decide = chartGraph().edges.filter((e) => e.source === 'restarting.decide');
  assert.equal(decide.length, (instanceMachine.root.states.restarting?.states.decide?.always ?? []).length);
  assert.ok(decide.every((e) => e.kind === 'always'));
  assert.equal(decide[0], {
    source: 'restarting.decide', target: 'exited', event: '', kind: 'always', delay: null,
    guard: 'shuttingDown', internal: false, label: 'always [shuttingDown]',
  });
  assert.is(decide.at(-1)?.label, 'always', 'the last one is the unguarded fallback');
  assert.is(decide.find((e) => e.target === 'restarting.backoff')?.guard, 'unclean');
});

graph('chart :: delayed edges carry their delay name; actor results read as done/error', () => {
  const edges = chartGraph().edges;
  const after = edges.filter((e) => e.kind === 'after').map((e) => `${e.source} ${e.delay} ${e.target}`);
  assert.equal(after, [
    'starting checkinTimeout restarting.stopping',
    'running degradedAfter awaiting-checkin',
    'awaiting-checkin hangAfter restarting.stopping',
    'restarting.stopping stopTimeout restarting.stopping',
    'restarting.backoff backoff updating',
    'restarting.backoff backoff starting',
  ]);
  const done = edges.find((e) => e.source === 'updating' && e.kind === 'done');
  assert.is(done?.label, 'update done [stopRequested]');
  const internal = edges.find((e) => e.source === '' && e.event === 'CONFIG');
  assert.equal([internal?.internal, internal?.target], [true, '']);
});

graph('chart :: guards read as text, combinators included', () => {
  const m = setup({ guards: { a: () => true, b: () => false } }).createMachine({
    initial: 'x',
    states: { x: { on: { GO: [{ guard: and(['a', not('b')]), target: 'y' }, { guard: 'a', target: 'y' }] } }, y: {} },
  });
  const labels = chartGraph(m).edges.map((e) => e.label);
  assert.equal(labels, ['GO [a and not b]', 'GO [a]']);
  assert.is(guardText({ type: 'named' }), 'named');
});

graph.run();

// --- what the dashboard uses

const paths = suite('chart state paths');

paths('chart :: state paths are the leaves a status can show, decide excluded', () => {
  assert.equal(statePaths(), ['stopped.idle', 'stopped.failing', 'updating', 'starting', 'running', 'awaiting-checkin',
    'restarting.stopping', 'restarting.backoff', 'exited']);
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

paths('chart :: the active state can be highlighted', () => {
  const text = toMermaid(chartGraph(), { active: 'restarting.backoff' });
  assert.ok(text.includes('\n  class restarting_backoff active\n'));
  assert.not.ok(toMermaid(chartGraph(), { active: 'no.such' }).includes(' active\n'));
});

paths.run();

// --- the three formats

const formats = suite('chart formats');

formats('chart :: Mermaid draws every edge once, root edges from "any state", the final state to [*]', () => {
  const text = renderChart('mermaid');
  const lines = text.split('\n');
  assert.is(lines[0], 'stateDiagram-v2');
  const arrows = lines.filter((l) => / --> /.test(l));
  // one per edge, plus the initial and final markers
  assert.is(arrows.length, chartGraph().edges.length + 2);
  assert.ok(lines.includes('  [*] --> stopped_idle'));
  assert.ok(lines.includes('  exited --> [*]'));
  assert.ok(lines.includes('  any_state --> exited: SHUTDOWN [persist]'));
  assert.ok(lines.includes('  any_state --> any_state: CONFIG'));
  assert.ok(lines.includes('  running --> awaiting_checkin: after degradedAfter'));
  assert.ok(lines.includes('  restarting_decide --> stopped_failing: always [giveUp]'));
});

formats('chart :: DOT groups compound states in clusters and quotes every id', () => {
  const text = renderChart('dot');
  assert.match(text, /^digraph "instance" \{\n/);
  assert.match(text, /subgraph "cluster_stopped" \{\n\s+label="stopped";[^\n]*\n\s+"stopped.idle" \[label="idle"\];/);
  assert.match(text, /"restarting.decide" \[label="decide", shape=diamond\];/);
  assert.match(text, /"exited" \[label="exited", shape=doublecircle\];/);
  assert.match(text, /"awaiting-checkin" -> "restarting.stopping" \[label="after hangAfter"/);
  assert.ok(text.trimEnd().endsWith('}'));
  const open = (text.match(/\{/g) ?? []).length;
  const close = (text.match(/\}/g) ?? []).length;
  assert.is(open, close);
});

formats('chart :: JSON is the graph as data', () => {
  const parsed = JSON.parse(renderChart('json')) as ReturnType<typeof chartGraph>;
  assert.equal(parsed, chartGraph());
});

formats.run();
