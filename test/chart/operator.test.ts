/** The operator's view of the chart (src/chart/operator.ts): derived from the machine, and covering all of it. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toDot } from '../../src/chart/dot.ts';
import { type ChartGraph, chartGraph, statePaths, within } from '../../src/chart/graph.ts';
import {
  HIDDEN_REGIONS,
  NEVER_FROM,
  OPERATOR_LEGEND,
  OPERATOR_REGION,
  OPERATOR_STATES,
  OPERATOR_WORDS,
  operatorGraph,
} from '../../src/chart/operator.ts';
import { createHarness } from '../machines/_support/harness.ts';

const test = suite('chart :: operator view');

/**
 * What the two tables miss of the machine's graph, said so a person can fix it: a state of the region without a
 * name, a region neither drawn nor hidden, a transition without words. Empty when the view covers the machine.
 */
function unmappedParts(graph: ChartGraph = chartGraph()): string[] {
  const missing: string[] = [];
  for (const s of graph.states) {
    if (s.parent === '' && s.path !== OPERATOR_REGION && !(s.path in HIDDEN_REGIONS))
      missing.push(`region "${s.path}" is neither drawn nor listed in HIDDEN_REGIONS`);
    if (within(graph, s.path, OPERATOR_REGION) && s.path !== OPERATOR_REGION && !(s.path in OPERATOR_STATES))
      missing.push(`state "${s.path}" has no name in OPERATOR_STATES`);
  }
  const inside = new Set(graph.states.filter((s) => within(graph, s.path, OPERATOR_REGION)).map((s) => s.path));
  for (const e of graph.edges) {
    if (inside.has(e.source) && !(e.label in OPERATOR_WORDS))
      missing.push(`transition "${e.label}" (${e.source} → ${e.target}) has no words in OPERATOR_WORDS`);
  }
  return [...new Set(missing)];
}

test('operator-view :: every state, region and transition of the machine is named for an operator', () => {
  const missing = unmappedParts();
  assert.equal(
    missing,
    [],
    `the operator's view does not cover the machine; name these in src/chart/operator.ts:\n  ${missing.join('\n  ')}`,
  );
});

test('operator-view :: a state, region or transition the machine gains is reported as unmapped', () => {
  const g = chartGraph();
  const grown: ChartGraph = {
    ...g,
    states: [
      ...g.states,
      { path: 'server.draining', name: 'draining', parent: 'server', kind: 'atomic', initial: null, transient: false },
      { path: 'upkeep', name: 'upkeep', parent: '', kind: 'compound', initial: null, transient: false },
    ],
    edges: [
      ...g.edges,
      {
        source: 'server.running',
        target: 'server.draining',
        event: 'DRAIN',
        kind: 'event',
        delay: null,
        guard: null,
        internal: false,
        label: 'DRAIN',
      },
    ],
  };
  assert.equal(unmappedParts(grown), [
    'state "server.draining" has no name in OPERATOR_STATES',
    'region "upkeep" is neither drawn nor listed in HIDDEN_REGIONS',
    'transition "DRAIN" (server.running → server.draining) has no words in OPERATOR_WORDS',
  ]);
  // Still drawn, under the machine's names, until someone names them.
  const view = operatorGraph(grown);
  assert.is(view.states.find((s) => s.path === 'server.draining')?.name, 'server.draining');
  assert.ok(view.edges.some((e) => e.target === 'server.draining' && e.label === 'DRAIN'));
});

test('operator-view :: one node per state a status can show, under its plain name; no other region', () => {
  const view = operatorGraph();
  const paths = view.states.map((s) => s.path);
  for (const path of statePaths()) {
    assert.ok(paths.includes(path), path);
    assert.is(view.states.find((s) => s.path === path)?.name, OPERATOR_STATES[path]);
  }
  for (const region of Object.keys(HIDDEN_REGIONS))
    assert.not.ok(
      paths.some((p) => p === region || p.startsWith(`${region}.`)),
      region,
    );
  assert.not.ok(paths.includes('lifecycle'), 'the region itself is the drawing');
});

test('operator-view :: transitions are in words, the buttons capitalised; no xstate names or guards', () => {
  const view = operatorGraph();
  const labels = view.edges.flatMap((e) => e.label.split('\n'));
  for (const button of ['Start', 'Restart', 'Stop', 'Rollback']) assert.ok(labels.includes(button), button);
  for (const l of labels) assert.not.match(l, /xstate|\[|^after |PROCESS_|_/, l);
  const key = (from: string, to: string) =>
    view.edges.find((e) => e.source === from && e.target === to)?.label.split('\n') ?? [];
  assert.ok(key('decide', 'restarting.backoff').includes('crashing in a loop'));
  assert.ok(key('server.running', 'server.stopping').includes('Restart'));
  assert.ok(key('restarting', 'stopped.idle').includes('Stop'), 'a Stop ends waiting to launch');
});

test('operator-view :: a request taken in every state of the server is one arrow that says so', () => {
  const dot = toDot(operatorGraph(), OPERATOR_LEGEND);
  const into = [...dot.matchAll(/^ {2}"([^"]+)" -> "server\.stopping" \[label="([^"]*)"/gm)].map((m) => m[2]!);
  const requests = into.filter((l) => l.startsWith('Restart'));
  assert.equal(requests, ['Restart\nRollback\nRestore\nthe watchdog stops\n(from any state of Server process)']);
  // A check-in is not taken while stopping, so its arrows stay one per state.
  const checkins = [...dot.matchAll(/^ {2}"([^"]+)" -> "server\.running" \[label="check-in"/gm)].map((m) => m[1]);
  assert.equal(checkins.sort(), ['server.awaiting-checkin', 'server.starting']);
});

test('operator-view :: a check-in is drawn only where the machine takes it (not while stopping)', async () => {
  const view = operatorGraph();
  const into = view.edges.filter((e) => e.target === 'server.running' && e.label === 'check-in').map((e) => e.source);
  assert.equal(into.sort(), ['server.awaiting-checkin', 'server.running', 'server.starting']);
  // NEVER_FROM states the machine's answer, checked here: a check-in of the current launch is taken while the
  // server starts and not once it is being stopped.
  assert.equal(NEVER_FROM, { 'CHECKIN [checkinCounts]': ['server.stopping'] });
  const h = createHarness();
  try {
    await h.launch();
    const checkin = () => ({ type: 'CHECKIN' as const, launchId: h.context().launchId });
    assert.is(h.state(), 'server.starting');
    assert.ok(h.actor.getSnapshot().can(checkin()), 'taken while starting');
    h.actor.send({ type: 'RESTART' });
    assert.is(h.state(), 'server.stopping');
    assert.not.ok(h.actor.getSnapshot().can(checkin()), 'not taken while stopping');
  } finally {
    h.stop();
  }
});

test.run();
