import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  COLUMNS,
  colourEnabled,
  paint,
  renderStatusTable,
  type StatusRow,
  stateStyle,
  statusCells,
} from '../../../src/cli/client/status-table.ts';

const now = Date.parse('2024-05-01T12:00:00.000Z');
const rows: StatusRow[] = [
  {
    key: 'alpha',
    name: 'Alpha',
    state: 'server.running',
    pid: 4242,
    revision: 'abc123',
    lastCheckinAt: '2024-05-01T11:59:57.000Z',
    startedAt: '2024-05-01T11:00:00.000Z',
    uptimeSeconds: 3725,
    startupFailures: 0,
    restarts: 2,
    updatePending: false,
    stopRequested: false,
  },
  {
    key: 'b',
    name: 'b',
    state: 'stopped.failing',
    pid: null,
    revision: null,
    lastCheckinAt: null,
    startedAt: null,
    uptimeSeconds: null,
    startupFailures: 3,
    restarts: 11,
    updatePending: false,
    stopRequested: false,
    lastExit: null,
  },
  // What an older daemon might send: no uptimeSeconds.
  {
    key: 'gamma',
    state: 'server.awaiting-checkin',
    pid: 7,
    revision: '1.0',
    lastCheckinAt: '2024-05-01T11:59:00.000Z',
    startedAt: '2024-05-01T11:58:00.000Z',
    startupFailures: 0,
    restarts: 0,
  },
];
const ESC = String.fromCharCode(27);

const cells = suite('statusCells :: one row');

cells('status-table :: every column, dashes for nulls, ages and uptimes formatted', () => {
  assert.equal(statusCells(rows[0]!, now), [
    'alpha',
    'server.running',
    'abc123',
    '4242',
    '1h 2m',
    '-',
    '-',
    '-',
    '3s ago',
    '2',
    '0',
    '-',
  ]);
  assert.equal(statusCells(rows[1]!, now), [
    'b',
    'stopped.failing',
    '-',
    '-',
    '-',
    '-',
    '-',
    '-',
    'never',
    '11',
    '3',
    '-',
  ]);
});

cells('status-table :: CPU in % of one core, the memory of the process tree in decimal units, the players', () => {
  const at = '2024-05-01T11:59:58.000Z';
  const sampled = (cpuPercent: number, rssBytes: number, players: number | null) =>
    statusCells(
      { ...rows[0]!, resources: { cpuPercent, cpuSeconds: 1, rssBytes, processes: 1, at }, players },
      now,
    ).slice(5, 8);
  assert.equal(sampled(12.4, 2_100_000_000, 17), ['12%', '2.1 GB', '17']);
  assert.equal(sampled(0.4, 350_000_000, 0), ['0.4%', '350 MB', '0']);
  assert.equal(sampled(0, 45_600_000, null), ['0%', '46 MB', '-']);
  assert.equal(sampled(231.6, 999, 3), ['232%', '999 bytes', '3']);
});

cells('status-table :: the last exit: why, the code or signal, how long ago', () => {
  const at = '2024-05-01T11:59:55.000Z';
  assert.is(
    statusCells(
      { ...rows[0]!, lastExit: { reason: 'hang', code: null, signal: 'SIGKILL', detail: null, at } },
      now,
    )[11],
    'hang (SIGKILL) 5s ago',
  );
  assert.is(
    statusCells({ ...rows[0]!, lastExit: { reason: 'crash', code: 1, signal: null, detail: null, at } }, now)[11],
    'crash (code 1) 5s ago',
  );
});

cells('status-table :: uptime falls back to startedAt when uptimeSeconds is absent', () => {
  assert.is(statusCells(rows[2]!, now)[4], '2m');
});

cells.run();

// ---

const plain = suite('renderStatusTable :: without colour');

plain('status-table :: header names the columns; rows are aligned; no escape codes', () => {
  const out = renderStatusTable(rows, { colour: false, now });
  assert.not.ok(out.includes(ESC), 'no ANSI');
  const lines = out.trimEnd().split('\n');
  assert.is(lines.length, 4);
  for (const c of COLUMNS) assert.ok(lines[0]!.includes(c), c);
  // Each column starts at the same offset on every line.
  const stateAt = lines[0]!.indexOf('STATE');
  const revAt = lines[0]!.indexOf('REVISION');
  assert.is(lines[1]!.indexOf('server.running'), stateAt);
  assert.is(lines[2]!.indexOf('stopped.failing'), stateAt);
  assert.is(lines[3]!.indexOf('server.awaiting-checkin'), stateAt);
  assert.is(lines[1]!.indexOf('abc123'), revAt);
  assert.is(lines[2]!.slice(revAt, revAt + 1), '-');
  assert.match(lines[1]!, /3s ago/);
  assert.not.match(lines[1]!, /\s$/, 'no trailing spaces');
});

plain('status-table :: a blocked instance gets a line saying what blocks it, after the table', () => {
  const blocked: StatusRow = {
    key: 'gamma',
    state: 'restarting.blocked',
    launchBlocked: { kind: 'resources', message: 'the watchdog is out of file descriptors (EMFILE)', attempts: 3 },
  };
  const lines = renderStatusTable([...rows, blocked], { colour: false, now })
    .trimEnd()
    .split('\n');
  assert.is(
    lines.at(-1),
    'gamma blocked: the watchdog is out of file descriptors (EMFILE) (3 attempts; retried until it works)',
  );
  assert.not.ok(
    renderStatusTable(rows, { colour: false, now }).includes('blocked:'),
    'nothing for instances that are not blocked',
  );
});

plain('status-table :: an empty list is the header alone', () => {
  assert.is(renderStatusTable([], { colour: false, now }).split('\n').filter(Boolean).length, 1);
});

plain.run();

// ---

const colour = suite('renderStatusTable :: with colour');

colour('status-table :: states coloured by kind; alignment measured without escape codes', () => {
  const extra: StatusRow[] = [
    { key: 'd', state: 'stopped.idle' },
    { key: 'e', state: 'restarting.backoff' },
    { key: 'f', state: 'updating' },
    { key: 'g', state: 'rolling-back' },
  ];
  const out = renderStatusTable([...rows, ...extra], { colour: true, now });
  assert.ok(out.includes(`${ESC}[32mserver.running${ESC}[39m`), 'running green');
  assert.ok(out.includes(`${ESC}[31mstopped.failing${ESC}[39m`), 'failing red');
  assert.ok(out.includes(`${ESC}[33mserver.awaiting-checkin${ESC}[39m`), 'awaiting yellow');
  assert.ok(out.includes(`${ESC}[2mstopped.idle${ESC}[22m`), 'idle dim');
  assert.ok(out.includes(`${ESC}[33mrestarting.backoff${ESC}[39m`), 'restarting yellow');
  assert.ok(out.includes(`${ESC}[33mrolling-back${ESC}[39m`), 'rolling back yellow');
  assert.ok(out.includes(`${ESC}[1mKEY${ESC}[22m`), 'bold header');
  const strip = (s: string) => s.replace(new RegExp(`${ESC}\\[[0-9;]*m`, 'g'), '');
  assert.is(strip(out), renderStatusTable([...rows, ...extra], { colour: false, now }));
});

colour('status-table :: stateStyle covers the state families', () => {
  const families = {
    'server.running': 'green',
    'server.awaiting-checkin': 'yellow',
    'server.starting': 'yellow',
    'server.stopping': 'yellow',
    'updating.downloading': 'yellow',
    'stopped.failing': 'red',
    'stopped.idle': 'dim',
    'something-else': undefined,
  };
  for (const [state, style] of Object.entries(families)) assert.is(stateStyle(state), style, state);
  assert.is(paint('x', 'green', false), 'x');
});

colour('status-table :: colour only on a TTY and without NO_COLOR', () => {
  assert.ok(colourEnabled({ isTTY: true }, {}));
  assert.not.ok(colourEnabled({ isTTY: false }, {}));
  assert.not.ok(colourEnabled({}, {}));
  assert.not.ok(colourEnabled({ isTTY: true }, { NO_COLOR: '1' }));
  // no-color.org: an empty NO_COLOR does not count.
  assert.ok(colourEnabled({ isTTY: true }, { NO_COLOR: '' }));
});

colour.run();
